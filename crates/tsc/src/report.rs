//! Reading an `.hlog` back: every tag's intervals merged into one
//! histogram, printed as a percentile table and plotted as an SVG
//! percentile distribution.

use std::fmt::Write as _;
use std::io;
use std::path::Path;

use base64::Engine as _;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::Deserializer;
use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
use plotters::prelude::*;

use crate::export::human_ns;

/// Every tag of an interval log, its intervals merged, in the order the
/// tags first appear.
pub struct Report {
    /// `(tag, histogram)`; the tag is `stream/stage` or `stage`.
    pub series: Vec<(String, Histogram<u64>)>,
    /// How many interval histograms were read.
    pub intervals: usize,
}

fn invalid(what: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what)
}

impl Report {
    /// Reads the log at `path`.
    pub fn read(path: &Path) -> io::Result<Report> {
        let bytes = std::fs::read(path)
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
        Report::parse(&bytes).map_err(|e| invalid(format!("{}: {e}", path.display())))
    }

    /// Parses an interval log.
    pub fn parse(log: &[u8]) -> io::Result<Report> {
        let mut series: Vec<(String, Histogram<u64>)> = Vec::new();
        let mut intervals = 0;
        let mut deserializer = Deserializer::new();
        let engine = base64::engine::general_purpose::STANDARD;
        for entry in IntervalLogIterator::new(log) {
            let entry = entry.map_err(|e| invalid(format!("not an interval log ({e:?})")))?;
            let LogEntry::Interval(interval) = entry else {
                continue;
            };
            intervals += 1;
            let tag = interval.tag().map_or("", |t| t.as_str()).to_owned();
            let raw = engine
                .decode(interval.encoded_histogram())
                .map_err(|e| invalid(format!("interval {intervals}: bad base64 ({e})")))?;
            let h: Histogram<u64> = deserializer
                .deserialize(&mut raw.as_slice())
                .map_err(|e| invalid(format!("interval {intervals}: bad histogram ({e:?})")))?;
            match series.iter_mut().find(|(t, _)| *t == tag) {
                Some((_, total)) => total
                    .add(&h)
                    .map_err(|e| invalid(format!("interval {intervals}: {e:?}")))?,
                None => series.push((tag, h)),
            }
        }
        if intervals == 0 {
            return Err(invalid("no interval histograms in the log".into()));
        }
        Ok(Report { series, intervals })
    }

    /// A table: one row per tag, count and p50 to max.
    pub fn table(&self) -> String {
        let width = self
            .series
            .iter()
            .map(|(t, _)| t.len())
            .max()
            .unwrap_or(0)
            .max(5);
        let mut out = String::new();
        let _ = writeln!(
            out,
            "{:<width$} {:>10} {:>11} {:>11} {:>11} {:>11} {:>11} {:>11}",
            "stage", "count", "p50", "p90", "p99", "p99.9", "p99.99", "max"
        );
        for (tag, h) in &self.series {
            let _ = write!(out, "{tag:<width$} {:>10}", h.len());
            for q in [0.5, 0.9, 0.99, 0.999, 0.9999] {
                let _ = write!(out, " {:>11}", human_ns(h.value_at_quantile(q)));
            }
            let _ = writeln!(out, " {:>11}", human_ns(h.max()));
        }
        out
    }

    /// Writes the percentile distribution of every tag to an SVG file: the
    /// x axis is the percentile on a "nines" scale (90 %, 99 %, 99.9 % equally
    /// spaced), the y axis the latency on a log scale.
    pub fn write_svg(&self, path: &Path) -> io::Result<()> {
        let drawn = self.draw(path);
        drawn.map_err(|e| io::Error::other(format!("{}: {e}", path.display())))
    }

    fn draw(&self, path: &Path) -> Result<(), Box<dyn std::error::Error>> {
        const NINES: f64 = 5.0; // up to 99.999 %
        let max = self.series.iter().map(|(_, h)| h.max()).max().unwrap_or(1);
        let min = self
            .series
            .iter()
            .filter(|(_, h)| !h.is_empty())
            .map(|(_, h)| h.min().max(1))
            .min()
            .unwrap_or(1);
        let root = SVGBackend::new(path, (1000, 600)).into_drawing_area();
        root.fill(&WHITE)?;
        let mut chart = ChartBuilder::on(&root)
            .caption("tickwire latency by percentile", ("sans-serif", 22))
            .margin(16)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d(
                0f64..NINES,
                ((min as f64 / 1.5).max(0.5)..max as f64 * 1.5).log_scale(),
            )?;
        chart
            .configure_mesh()
            .x_labels(NINES as usize + 1)
            .x_label_formatter(&|x| {
                let p = 100.0 * (1.0 - 10f64.powf(-x));
                format!("{p:.*}%", (x.round() as usize).saturating_sub(2))
            })
            .y_label_formatter(&|y| human_ns(*y as u64))
            .x_desc("percentile")
            .y_desc("latency")
            .draw()?;
        for (i, (tag, h)) in self.series.iter().enumerate() {
            if h.is_empty() {
                continue;
            }
            let colour = Palette99::pick(i).to_rgba();
            let points = (0..=500).map(|k| {
                let x = NINES * k as f64 / 500.0;
                let q = 1.0 - 10f64.powf(-x);
                (x, h.value_at_quantile(q).max(1) as f64)
            });
            chart
                .draw_series(LineSeries::new(points, colour.stroke_width(2)))?
                .label(tag.as_str())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(2))
                });
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .position(SeriesLabelPosition::UpperLeft)
            .draw()?;
        root.present()?;
        Ok(())
    }
}
