//! clap parsing for the library's option enums ([`Named`]): the possible
//! values, each with its help line, listed in `--help` and checked by clap.

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};

use memtally_core::model::{Figure, Named};

/// A value parser for `T`: accepts exactly `T`'s names.
pub fn choice<T: Named + Send + Sync>() -> impl TypedValueParser<Value = T> {
    values(T::ALL.iter().map(|v| (v.name(), v.help())), T::from_name)
}

/// A value parser of the figures that count bytes (`--figure` of the
/// folded stacks: a page size adds up to nothing), each with its help.
pub fn byte_figure() -> impl TypedValueParser<Value = Figure> {
    let figures = Figure::ALL.iter().filter(|f| f.counts_bytes());
    values(figures.map(|f| (f.name(), f.help())), Figure::from_name)
}

/// A value parser that accepts the names of `values` (each listed with
/// its help line) and reads one with `parse`.
pub fn values<T: Clone + Send + Sync + 'static>(
    values: impl Iterator<Item = (&'static str, &'static str)>,
    parse: impl Fn(&str) -> Option<T> + Clone + Send + Sync + 'static,
) -> impl TypedValueParser<Value = T> {
    let values = values.map(|(name, help)| PossibleValue::new(name).help(help));
    PossibleValuesParser::new(values).try_map(move |name| {
        parse(&name).ok_or_else(|| format!("{name}: not one of the possible values"))
    })
}
