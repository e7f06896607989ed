//! Where in the file a key is, from the TOML parser's own spans: the
//! document as `toml` parsed it (every key and value with its byte range),
//! walked by key path (`venue[1].standby`) one way and by byte offset (an
//! error's span) the other. Nothing here reads the text again or the
//! parser's wording.

use std::ops::Range;

use toml::Spanned;
use toml::de::{DeString, DeTable, DeValue};

use super::{ConfigError, error};

/// A place in the configuration file: line and column, both from 1 (the
/// column counts characters).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Location {
    /// The line.
    pub line: usize,
    /// The column.
    pub column: usize,
}

/// The file's text and its parsed document, spans and all.
pub(super) struct Source<'a> {
    text: &'a str,
    doc: DeTable<'a>,
}

impl<'a> Source<'a> {
    /// Parses `text`; its first syntax error (a duplicate key among them),
    /// located, if it has one.
    pub(super) fn parse(text: &'a str) -> Result<Source<'a>, ConfigError> {
        let (doc, errors) = DeTable::parse_recoverable(text);
        let source = Source {
            text,
            doc: doc.into_inner(),
        };
        match errors.first() {
            None => Ok(source),
            Some(e) => Err(source.refusal(e)),
        }
    }

    /// The text.
    pub(super) fn text(&self) -> &'a str {
        self.text
    }

    /// A `toml` error about this text (the parser's, or serde's while
    /// reading the text) as a configuration error: the key whose key or
    /// value its span falls in, and the span's line and column.
    pub(super) fn refusal(&self, e: &toml::de::Error) -> ConfigError {
        let at = e.span().map(|s| s.start);
        let key = e
            .span()
            .and_then(|span| self.key_at(span.start).or_else(|| self.same_key(span)))
            .unwrap_or_default();
        let mut refused = error(key, e.message().trim());
        refused.at = at.map(|at| self.location(at));
        refused
    }

    /// `e` with the place of its key in the file: the key's value, or,
    /// for a key the file leaves out (a default, a missing key), the
    /// deepest table on its path that the file has.
    pub(super) fn located(&self, mut e: ConfigError) -> ConfigError {
        if e.env.is_none() && e.at.is_none() {
            e.at = self.span_of(&e.key).map(|s| self.location(s.start));
        }
        e
    }

    /// The dotted path (`venue[1].standby`, `sinks.queue`) of the key
    /// whose key or value holds byte `at`; `None` if no key does.
    fn key_at(&self, at: usize) -> Option<String> {
        in_table(&self.doc, "", at)
    }

    /// The path of the last key before `span` that is the same key as
    /// the one `span` covers: a duplicate key's first place, which the
    /// recovered document keeps where it dropped the duplicate.
    fn same_key(&self, span: Range<usize>) -> Option<String> {
        let name = self.text.get(span.clone())?;
        let mut best: Option<(usize, String)> = None;
        let mut visit = |k: &Spanned<DeString<'_>>, path: &str| {
            let s = k.span();
            if s.end <= span.start
                && self.text.get(s.clone()) == Some(name)
                && best.as_ref().is_none_or(|(at, _)| *at < s.start)
            {
                best = Some((s.start, path.to_owned()));
            }
        };
        walk_keys(&self.doc, "", &mut visit);
        best.map(|(_, path)| path)
    }

    /// The span of `key`'s value (`venue[0].instruments[1]`), or of the
    /// deepest value on its path the document has; `None` if it has none.
    fn span_of(&self, key: &str) -> Option<Range<usize>> {
        let mut here: Option<&Spanned<DeValue<'_>>> = None;
        for part in key.split('.') {
            let (name, indices) = part.split_once('[').unwrap_or((part, ""));
            let table = match here.map(Spanned::get_ref) {
                None => &self.doc,
                Some(DeValue::Table(t)) => t,
                Some(_) => break,
            };
            let Some((_, value)) = table.iter().find(|(k, _)| k.get_ref() == name) else {
                break;
            };
            here = Some(value);
            for index in indices.split('[') {
                let Ok(i) = index.trim_end_matches(']').parse::<usize>() else {
                    continue;
                };
                match here.map(Spanned::get_ref) {
                    Some(DeValue::Array(a)) if i < a.len() => here = a.get(i),
                    _ => return here.map(Spanned::span),
                }
            }
        }
        here.map(Spanned::span)
    }

    /// Byte `at`'s line and column.
    fn location(&self, at: usize) -> Location {
        let before = &self.text[..at.min(self.text.len())];
        let start = before.rfind('\n').map_or(0, |n| n + 1);
        Location {
            line: before.matches('\n').count() + 1,
            column: before[start..].chars().count() + 1,
        }
    }
}

/// Whether `span` holds byte `at` (an empty span: starts at it).
fn holds(span: &Range<usize>, at: usize) -> bool {
    span.contains(&at) || (span.is_empty() && span.start == at)
}

fn in_table(table: &DeTable<'_>, path: &str, at: usize) -> Option<String> {
    table.iter().find_map(|(k, v)| {
        let key = if path.is_empty() {
            k.get_ref().to_string()
        } else {
            format!("{path}.{}", k.get_ref())
        };
        if holds(&k.span(), at) {
            return Some(key);
        }
        in_value(v, &key, at)
    })
}

/// The deepest key in `value` (itself at `path`) that holds byte `at`. A
/// table's own span is its header, which holds none of its keys: every
/// child is searched, not only those inside the parent's span.
fn in_value(value: &Spanned<DeValue<'_>>, path: &str, at: usize) -> Option<String> {
    let inner = match value.get_ref() {
        DeValue::Table(t) => in_table(t, path, at),
        DeValue::Array(a) => a
            .iter()
            .enumerate()
            .find_map(|(i, e)| in_value(e, &format!("{path}[{i}]"), at)),
        _ => None,
    };
    inner.or_else(|| holds(&value.span(), at).then(|| path.to_owned()))
}

/// Calls `visit` with every key of `table` (itself at `path`) and the
/// key's path, depth first.
fn walk_keys(
    table: &DeTable<'_>,
    path: &str,
    visit: &mut impl FnMut(&Spanned<DeString<'_>>, &str),
) {
    for (k, v) in table.iter() {
        let key = if path.is_empty() {
            k.get_ref().to_string()
        } else {
            format!("{path}.{}", k.get_ref())
        };
        visit(k, &key);
        walk_value(v, &key, visit);
    }
}

fn walk_value(
    value: &Spanned<DeValue<'_>>,
    path: &str,
    visit: &mut impl FnMut(&Spanned<DeString<'_>>, &str),
) {
    match value.get_ref() {
        DeValue::Table(t) => walk_keys(t, path, visit),
        DeValue::Array(a) => {
            for (i, e) in a.iter().enumerate() {
                walk_value(e, &format!("{path}[{i}]"), visit);
            }
        }
        _ => {}
    }
}
