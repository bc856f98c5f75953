//! memtally's command-line tests, in one binary (one link of the
//! crate instead of one per file): live children the tests start
//! themselves, recorded `/proc` trees, the seeds' golden outputs, real
//! published vmmap files from `../shared` (skipped with a printed reason
//! where it is absent), and the exporter against a real Prometheus.

mod support;

mod bad_bytes;
mod categories;
mod cgroup;
mod classic_parity;
mod completions;
mod csv_docs;
mod cuts;
mod deploy;
mod diff_memory;
mod early_stop;
mod exit_races;
mod exporter_cost;
mod figures;
mod files;
mod gpu;
mod gpu_notes;
mod help_text;
mod hostile;
mod hostile_reads;
mod hostile_writes;
mod huge_pages;
mod json_docs;
mod machine_swap;
mod metrics_figures;
mod over_time;
mod pages;
mod permissions;
mod plots;
mod privileges;
mod prom_rules;
mod prometheus;
mod prometheus_live;
mod readme_screens;
mod relro;
mod report;
mod schemas;
mod screen;
mod selections;
mod serve_load;
mod show_errors;
mod show_live;
mod show_notes;
mod show_rounding;
mod signals;
mod small_ones;
mod top_columns;
mod top_live;
mod top_options;
mod totals;
mod ui;
mod ui_columns;
mod ui_keys;
mod ui_screens;
mod vmmap_cli;
mod vmmap_csv;
mod vmmap_footprint;
mod vmmap_over_time;
mod vmmap_parity;
mod vmmap_pid;
mod vmmap_split;
mod vmmap_view;
mod vmmap_warnings;
mod watch_summary;
mod width;
mod wss;
