//! The decoder's layouts held against `schema/spot_stream_1_0.toml`, the
//! facts of the venue's published schema: every offset laid out end to end
//! from the description's types, and messages written by a writer that
//! knows only the description, read back by the decoder field by field.

use std::collections::BTreeMap;

use proptest::prelude::*;
use serde::Deserialize;
use tickwire_sbe::layout::{self, Field};
use tickwire_sbe::spot_stream::{self, Message};

#[derive(Deserialize)]
struct Description {
    schema: SchemaFacts,
    types: BTreeMap<String, usize>,
    aliases: BTreeMap<String, String>,
    header: Block,
    dimensions: BTreeMap<String, Block>,
    var_data: BTreeMap<String, VarData>,
    message: Vec<MessageFacts>,
}

#[derive(Deserialize)]
struct SchemaFacts {
    package: String,
    id: u16,
    version: u16,
    byte_order: String,
}

#[derive(Deserialize)]
struct Block {
    fields: Vec<FieldFacts>,
}

#[derive(Deserialize)]
struct FieldFacts {
    name: String,
    #[serde(rename = "type")]
    ty: String,
    #[serde(default)]
    presence: Option<String>,
}

#[derive(Deserialize)]
struct VarData {
    length: String,
}

#[derive(Deserialize)]
struct MessageFacts {
    name: String,
    id: u16,
    fields: Vec<FieldFacts>,
    groups: Vec<GroupFacts>,
    data: Vec<DataFacts>,
}

#[derive(Deserialize)]
struct GroupFacts {
    name: String,
    dimension: String,
    fields: Vec<FieldFacts>,
}

#[derive(Deserialize)]
struct DataFacts {
    name: String,
    encoding: String,
}

fn description() -> Description {
    let text = include_str!("../schema/spot_stream_1_0.toml");
    toml::from_str(text).expect("the schema description parses")
}

impl Description {
    /// A field's size on the wire: 0 for a constant.
    fn size(&self, f: &FieldFacts) -> usize {
        if f.presence.as_deref() == Some("constant") {
            return 0;
        }
        let primitive = self.aliases.get(&f.ty).unwrap_or(&f.ty);
        *self
            .types
            .get(primitive)
            .unwrap_or_else(|| panic!("type {primitive} of {}", f.name))
    }

    fn primitive<'a>(&'a self, f: &'a FieldFacts) -> &'a str {
        self.aliases.get(&f.ty).unwrap_or(&f.ty)
    }

    /// The fields laid end to end, as SBE does where offsets are absent.
    fn lay_out(&self, fields: &[FieldFacts]) -> (Vec<Field>, usize) {
        let mut at = 0;
        let mut out = Vec::new();
        for f in fields {
            let size = self.size(f);
            if size > 0 {
                out.push(Field {
                    name: leak(&f.name),
                    offset: at,
                    size,
                });
            }
            at += size;
        }
        (out, at)
    }
}

fn leak(s: &str) -> &'static str {
    Box::leak(s.to_owned().into_boxed_str())
}

#[test]
fn the_layouts_are_the_published_schemas() {
    let d = description();
    assert_eq!(d.schema.package, "spot_stream");
    assert_eq!(d.schema.id, spot_stream::SCHEMA_ID);
    assert_eq!(d.schema.version, spot_stream::SCHEMA_VERSION);
    assert_eq!(d.schema.byte_order, "littleEndian");

    let (header, header_len) = d.lay_out(&d.header.fields);
    assert_eq!(header, layout::HEADER);
    assert_eq!(header_len, spot_stream::header::LEN);

    assert_eq!(
        d.message.len(),
        layout::SPOT_STREAM.len(),
        "every template, no more"
    );
    for (m, ours) in d.message.iter().zip(layout::SPOT_STREAM) {
        assert_eq!((m.name.as_str(), m.id), (ours.name, ours.id));
        let (fields, block) = d.lay_out(&m.fields);
        assert_eq!(fields, ours.fields, "{}", m.name);
        assert_eq!(block, ours.block_length, "{}", m.name);
        assert_eq!(m.groups.len(), ours.groups.len(), "{}", m.name);
        for (g, og) in m.groups.iter().zip(ours.groups) {
            assert_eq!(g.name, og.name);
            let (dim, _) = d.lay_out(&d.dimensions[&g.dimension].fields);
            assert_eq!(dim, og.dimension, "{}.{}", m.name, g.name);
            let (fields, entry) = d.lay_out(&g.fields);
            assert_eq!(fields, og.fields, "{}.{}", m.name, g.name);
            assert_eq!(entry, og.entry_length, "{}.{}", m.name, g.name);
        }
        let data: Vec<&str> = m.data.iter().map(|v| v.name.as_str()).collect();
        assert_eq!(data, ours.data, "{}", m.name);
        for v in &m.data {
            assert_eq!(
                d.var_data[&v.encoding].length, "uint8",
                "{}.{}",
                m.name, v.name
            );
        }
    }
}

/// A message written from the description alone: each field's value,
/// little-endian at its size, end to end; `values` in the order written.
struct Written {
    bytes: Vec<u8>,
    /// `name` (root fields), `group[i].name` (entries), `symbol`.
    values: BTreeMap<String, i64>,
}

fn write_from_description(
    d: &Description,
    m: &MessageFacts,
    counts: &[usize],
    symbol: &[u8],
    seed: &mut u64,
) -> Written {
    let mut next = || {
        *seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        *seed
    };
    let mut bytes = Vec::new();
    let mut values = BTreeMap::new();
    let field = |bytes: &mut Vec<u8>,
                 values: &mut BTreeMap<String, i64>,
                 key: String,
                 f: &FieldFacts,
                 r: u64| {
        let size = d.size(f);
        if size == 0 {
            return;
        }
        let v: i64 = match d.primitive(f) {
            "int8" => i64::from(r as i8),
            // The one uint8 in the schema is a boolEnum: 0 or 1.
            "uint8" => (r & 1) as i64,
            "int64" => r as i64,
            other => panic!("no field of type {other} expected in a block"),
        };
        bytes.extend_from_slice(&v.to_le_bytes()[..size]);
        values.insert(key, v);
    };
    let (_, block) = d.lay_out(&m.fields);
    for (name, v) in [
        ("blockLength", block as u64),
        ("templateId", u64::from(m.id)),
        ("schemaId", u64::from(d.schema.id)),
        ("version", u64::from(d.schema.version)),
    ] {
        let f = d.header.fields.iter().find(|f| f.name == name).unwrap();
        bytes.extend_from_slice(&v.to_le_bytes()[..d.size(f)]);
    }
    for f in &m.fields {
        let r = next();
        field(&mut bytes, &mut values, f.name.clone(), f, r);
    }
    for (g, &count) in m.groups.iter().zip(counts) {
        let dim = &d.dimensions[&g.dimension].fields;
        let (_, entry) = d.lay_out(&g.fields);
        bytes.extend_from_slice(&(entry as u64).to_le_bytes()[..d.size(&dim[0])]);
        bytes.extend_from_slice(&(count as u64).to_le_bytes()[..d.size(&dim[1])]);
        for i in 0..count {
            for f in &g.fields {
                let r = next();
                field(
                    &mut bytes,
                    &mut values,
                    format!("{}[{i}].{}", g.name, f.name),
                    f,
                    r,
                );
            }
        }
    }
    bytes.push(symbol.len() as u8);
    bytes.extend_from_slice(symbol);
    Written { bytes, values }
}

/// What the decoder read, by the description's names.
fn read_back(msg: &Message<'_>) -> (BTreeMap<String, i64>, Vec<u8>) {
    let mut v = BTreeMap::new();
    let mut put = |k: String, x: i64| {
        assert!(v.insert(k.clone(), x).is_none(), "{k} twice");
    };
    let levels = |put: &mut dyn FnMut(String, i64), side: &str, it: spot_stream::Levels<'_>| {
        for (i, l) in it.enumerate() {
            put(format!("{side}[{i}].price"), l.price);
            put(format!("{side}[{i}].qty"), l.qty);
        }
    };
    let symbol = match msg {
        Message::Trades(t) => {
            let h = t.head();
            put("eventTime".into(), h.event_time_us);
            put("transactTime".into(), h.transact_time_us);
            put("priceExponent".into(), h.price_exponent.into());
            put("qtyExponent".into(), h.qty_exponent.into());
            for (i, x) in t.trades().enumerate() {
                put(format!("trades[{i}].id"), x.id);
                put(format!("trades[{i}].price"), x.price);
                put(format!("trades[{i}].qty"), x.qty);
                put(format!("trades[{i}].isBuyerMaker"), x.is_buyer_maker.into());
            }
            t.symbol()
        }
        Message::BestBidAsk(b) => {
            let h = b.head();
            put("eventTime".into(), h.event_time_us);
            put("bookUpdateId".into(), h.book_update_id);
            put("priceExponent".into(), h.price_exponent.into());
            put("qtyExponent".into(), h.qty_exponent.into());
            put("bidPrice".into(), h.bid.price);
            put("bidQty".into(), h.bid.qty);
            put("askPrice".into(), h.ask.price);
            put("askQty".into(), h.ask.qty);
            b.symbol()
        }
        Message::DepthSnapshot(s) => {
            let h = s.head();
            put("eventTime".into(), h.event_time_us);
            put("bookUpdateId".into(), h.book_update_id);
            put("priceExponent".into(), h.price_exponent.into());
            put("qtyExponent".into(), h.qty_exponent.into());
            levels(&mut put, "bids", s.bids());
            levels(&mut put, "asks", s.asks());
            s.symbol()
        }
        Message::DepthDiff(s) => {
            let h = s.head();
            put("eventTime".into(), h.event_time_us);
            put("firstBookUpdateId".into(), h.first_update_id);
            put("lastBookUpdateId".into(), h.last_update_id);
            put("priceExponent".into(), h.price_exponent.into());
            put("qtyExponent".into(), h.qty_exponent.into());
            levels(&mut put, "bids", s.bids());
            levels(&mut put, "asks", s.asks());
            s.symbol()
        }
        Message::Unknown { template_id } => panic!("template {template_id} read as unknown"),
    };
    (v, symbol.to_vec())
}

proptest! {
    /// Every template, written from the description with any values and
    /// counts, reads back field for field.
    #[test]
    fn every_template_written_from_the_description_reads_back(
        seed in any::<u64>(),
        counts in proptest::collection::vec(0usize..30, 2),
        symbol in proptest::collection::vec(b'A'..=b'Z', 0..20),
    ) {
        let d = description();
        for m in &d.message {
            let mut s = seed;
            let w = write_from_description(&d, m, &counts, &symbol, &mut s);
            let msg = spot_stream::decode(&w.bytes).map_err(|e| TestCaseError::fail(format!("{}: {e}", m.name)))?;
            let (values, sym) = read_back(&msg);
            prop_assert_eq!(&values, &w.values, "{}", m.name);
            prop_assert_eq!(&sym, &symbol);
        }
    }
}
