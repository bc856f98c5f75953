//! clap parsing for the library's option enums ([`Named`]): the possible
//! values, each with its help line, listed in `--help` and checked by clap.

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};

use memtally_core::model::{Figure, Named};

/// A value parser for `T`: accepts exactly `T`'s names.
pub fn choice<T: Named + Send + Sync>() -> impl TypedValueParser<Value = T> {
    PossibleValuesParser::new(T::ALL.iter().map(|v| PossibleValue::new(v.name()).help(v.help())))
        .try_map(|name| {
            T::from_name(&name).ok_or_else(|| format!("{name}: not one of the possible values"))
        })
}

/// A value parser of the figures that count bytes (`--figure` of the
/// folded stacks: a page size adds up to nothing), each with its help.
pub fn byte_figure() -> impl TypedValueParser<Value = Figure> {
    let figures = Figure::ALL.iter().filter(|f| f.counts_bytes());
    PossibleValuesParser::new(figures.map(|f| PossibleValue::new(f.name()).help(f.help()))).try_map(
        |name| {
            Figure::from_name(&name)
                .ok_or_else(|| format!("{name}: not one of the possible values"))
        },
    )
}
