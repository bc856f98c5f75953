//! What a view's rows leave out of its total, named: `smaps` rounds every
//! mapping's proportional figures down to a whole kB, the kernel's
//! `smaps_rollup` sums them exactly, and a view's total takes the rollup's
//! (the exact one) while its rows add up mappings. Without a row for the
//! difference, a chromium renderer's rows add up to 202 kB less PSS than
//! the total row under them.

use serde::ser::{Serialize, SerializeMap, Serializer};

use crate::analyze::signed;
use crate::model::sizes::ROUNDED_PER_MAPPING;
use crate::model::{Named, Process, Sizes};

/// Where the proportional figures of a view's total come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum TotalsFrom {
    /// Every process's rollup: the kernel's exact sums.
    SmapsRollup,
    /// Some processes' rollups; the others' mappings added up.
    Mixed,
    /// The mappings added up (no rollup read, or none that matched them).
    Regions,
}

impl TotalsFrom {
    /// Where the totals of `processes` come from.
    pub fn of(processes: &[Process]) -> TotalsFrom {
        let with = processes.iter().filter(|p| p.rollup.is_some()).count();
        match with {
            0 => TotalsFrom::Regions,
            n if n == processes.len() => TotalsFrom::SmapsRollup,
            _ => TotalsFrom::Mixed,
        }
    }
}

/// The total minus the sum of every row, for each proportional figure
/// both have, in bytes. Every other figure is summed the same way in rows
/// and total, so it has no rounding. Negative only on a live read where
/// the process's PSS moved between its smaps and its rollup (another
/// process mapped or left a page they share).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rounding {
    /// (figure, total - rows), in `ROUNDED_PER_MAPPING` order.
    pub figures: Vec<(crate::model::Figure, i64)>,
}

impl Rounding {
    /// The rounding between `totals` and `rows` (every region, once): a
    /// figure goes in when both have it; `None` when no figure differs.
    pub fn between(totals: &Sizes, rows: &Sizes) -> Option<Rounding> {
        let figures: Vec<_> = ROUNDED_PER_MAPPING
            .iter()
            .filter_map(|&f| {
                let (t, r) = (totals.field(f)?, rows.field(f)?);
                Some((f, signed::clamp(i128::from(t) - i128::from(r))))
            })
            .collect();
        figures.iter().any(|&(_, d)| d != 0).then_some(Rounding { figures })
    }

    /// The rounding of one figure; `None` when it has none (rows and
    /// total are the same sum).
    pub fn get(&self, figure: crate::model::Figure) -> Option<i64> {
        self.figures.iter().find(|(f, _)| *f == figure).map(|&(_, d)| d)
    }
}

/// A flat map of figure name to signed bytes, like [`Sizes`].
impl Serialize for Rounding {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.figures.len()))?;
        for (f, d) in &self.figures {
            map.serialize_entry(f.name(), d)?;
        }
        map.end()
    }
}

/// The schema of that map: the proportional figures smaps rounds per
/// mapping, each signed bytes, and no other key.
#[cfg(feature = "schema")]
impl schemars::JsonSchema for Rounding {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Rounding".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let properties: serde_json::Map<String, serde_json::Value> = ROUNDED_PER_MAPPING
            .iter()
            .map(|f| (f.name().to_string(), serde_json::json!({ "type": "integer" })))
            .collect();
        schemars::json_schema!({
            "type": "object",
            "properties": properties,
            "additionalProperties": false,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Figure;

    #[test]
    fn names_what_the_rows_leave_out_of_the_total() {
        let rows =
            Sizes { rss: Some(8192), pss: Some(3072), swap_pss: Some(0), ..Sizes::default() };
        let totals =
            Sizes { rss: Some(8192), pss: Some(4000), pss_anon: Some(9), ..Sizes::default() };
        let r = Rounding::between(&totals, &rows).expect("pss differs");
        assert_eq!(r.figures, vec![(Figure::Pss, 928)], "pss_anon: rows lack it; swap_pss: total");
        assert_eq!(r.get(Figure::Rss), None);
        assert_eq!(Rounding::between(&rows, &rows), None, "nothing to name");
        let moved = Sizes { pss: Some(2048), ..rows.clone() };
        assert_eq!(Rounding::between(&moved, &rows).unwrap().get(Figure::Pss), Some(-1024));
    }
}
