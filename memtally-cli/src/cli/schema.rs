//! `memtally schema [NAME]`: the JSON Schema of a JSON output
//! (docs/schema/NAME.json), built from the types that print it.
//! `--list` names them. Hidden from `--help`: it regenerates the
//! committed files (tests/cli/schemas.rs, `MEMTALLY_BLESS=1`). Only in a
//! build with the `schema` feature (the test command's), not the
//! installed binary.

use std::io::Write;

use clap::Args;

use memtally_core::{Error, Result};

use crate::render::schema::{find, DOCUMENTS};

#[derive(Debug, Args)]
pub struct SchemaArgs {
    /// The document whose schema to print (`top`, `show`, ...; see --list).
    #[arg(value_name = "NAME", required_unless_present = "list", conflicts_with = "list")]
    pub name: Option<String>,

    /// Print the names of the schemas there are, one a line.
    #[arg(long)]
    pub list: bool,
}

pub fn run(args: &SchemaArgs, out: &mut dyn Write) -> Result<()> {
    let mut text = String::new();
    match &args.name {
        None => DOCUMENTS.iter().for_each(|d| text.extend([d.name, "\n"])),
        Some(name) => {
            let doc = find(name).ok_or_else(|| {
                let known: Vec<&str> = DOCUMENTS.iter().map(|d| d.name).collect();
                Error::Usage(format!("no schema `{name}`: the schemas are {}", known.join(", ")))
            })?;
            text = serde_json::to_string_pretty(&doc.schema())
                .map_err(|e| Error::io("schema", std::io::Error::other(e)))?;
            text.push('\n');
        }
    }
    out.write_all(text.as_bytes()).map_err(|e| Error::io("standard output", e))
}
