//! memtally's command-line tests, in one binary (one link of the
//! crate instead of one per file): live children the tests start
//! themselves, recorded `/proc` trees, the seeds' golden outputs, real
//! published vmmap files from `../shared` (skipped with a printed reason
//! where it is absent), and the exporter against a real Prometheus.
//!
//! Most of them read Linux's /proc (of children they start, or recorded):
//! those are compiled on Linux only. What works on a Mac (vmmap output,
//! a stand-in `vmmap`, completions, help) is compiled everywhere.

mod support;

#[cfg(target_os = "linux")]
mod bad_bytes;
#[cfg(target_os = "linux")]
mod bounded_inputs;
#[cfg(target_os = "linux")]
mod capture_cut;
#[cfg(target_os = "linux")]
mod categories;
#[cfg(target_os = "linux")]
mod cgroup;
#[cfg(target_os = "linux")]
mod cgroup_ns;
#[cfg(target_os = "linux")]
mod classic_parity;
mod completions;
#[cfg(target_os = "linux")]
mod cross_view;
#[cfg(target_os = "linux")]
mod csv_docs;
#[cfg(target_os = "linux")]
mod cuts;
#[cfg(target_os = "linux")]
mod deploy;
#[cfg(target_os = "linux")]
mod diff_memory;
#[cfg(target_os = "linux")]
mod diff_several;
#[cfg(target_os = "linux")]
mod early_stop;
#[cfg(target_os = "linux")]
mod escapes;
#[cfg(target_os = "linux")]
mod exit_races;
#[cfg(target_os = "linux")]
mod exporter_cost;
#[cfg(target_os = "linux")]
mod faults;
#[cfg(target_os = "linux")]
mod figures;
#[cfg(target_os = "linux")]
mod files;
mod fleet_conventions;
#[cfg(target_os = "linux")]
mod gpu;
#[cfg(target_os = "linux")]
mod gpu_notes;
#[cfg(target_os = "linux")]
mod gpu_nvidia;
#[cfg(target_os = "linux")]
mod gpu_selection;
mod help_text;
#[cfg(target_os = "linux")]
mod hostile;
#[cfg(target_os = "linux")]
mod hostile_reads;
#[cfg(target_os = "linux")]
mod hostile_writes;
#[cfg(target_os = "linux")]
mod huge_pages;
#[cfg(target_os = "linux")]
mod interop;
#[cfg(target_os = "linux")]
mod json_docs;
#[cfg(target_os = "linux")]
mod machine_swap;
#[cfg(target_os = "linux")]
mod metrics_figures;
#[cfg(target_os = "linux")]
mod oom_kills;
#[cfg(target_os = "linux")]
mod over_time;
#[cfg(target_os = "linux")]
mod pages;
#[cfg(target_os = "linux")]
mod pages_huge;
#[cfg(target_os = "linux")]
mod permissions;
#[cfg(target_os = "linux")]
mod pid_reuse;
#[cfg(target_os = "linux")]
mod plot_bounded;
#[cfg(target_os = "linux")]
mod plots;
#[cfg(target_os = "linux")]
mod plots_look;
#[cfg(target_os = "linux")]
mod private_outputs;
#[cfg(target_os = "linux")]
mod privileges;
#[cfg(target_os = "linux")]
mod prom_rules;
#[cfg(target_os = "linux")]
mod prometheus;
#[cfg(target_os = "linux")]
mod prometheus_conventions;
#[cfg(target_os = "linux")]
mod prometheus_live;
#[cfg(target_os = "linux")]
mod prometheus_pages;
#[cfg(target_os = "linux")]
mod readme_screens;
#[cfg(target_os = "linux")]
mod relro;
#[cfg(target_os = "linux")]
mod report;
#[cfg(target_os = "linux")]
mod report_bounded;
#[cfg(target_os = "linux")]
mod report_budget;
#[cfg(target_os = "linux")]
mod report_columns;
#[cfg(target_os = "linux")]
mod report_exact;
#[cfg(target_os = "linux")]
mod report_faults;
#[cfg(target_os = "linux")]
mod report_gpu;
#[cfg(target_os = "linux")]
mod report_headline;
#[cfg(target_os = "linux")]
mod report_redact;
#[cfg(target_os = "linux")]
mod report_vmmap;
#[cfg(target_os = "linux")]
mod rss_peak;
#[cfg(target_os = "linux")]
mod schemas;
#[cfg(target_os = "linux")]
mod screen;
#[cfg(target_os = "linux")]
mod selections;
#[cfg(target_os = "linux")]
mod serve_load;
// Its users' password hashes are made with bcrypt, which only `serve` brings.
#[cfg(all(target_os = "linux", feature = "serve"))]
mod serve_tls;
#[cfg(target_os = "linux")]
mod serve_wide;
#[cfg(target_os = "linux")]
mod show_errors;
#[cfg(target_os = "linux")]
mod show_live;
#[cfg(target_os = "linux")]
mod show_notes;
#[cfg(target_os = "linux")]
mod show_rounding;
#[cfg(target_os = "linux")]
mod signals;
#[cfg(target_os = "linux")]
mod small_ones;
#[cfg(target_os = "linux")]
mod snapshot_exact;
mod snapshot_format1;
#[cfg(target_os = "linux")]
mod top_columns;
#[cfg(target_os = "linux")]
mod top_huge_columns;
#[cfg(target_os = "linux")]
mod top_live;
#[cfg(target_os = "linux")]
mod top_options;
#[cfg(target_os = "linux")]
mod totals;
#[cfg(target_os = "linux")]
mod ui;
#[cfg(target_os = "linux")]
mod ui_columns;
#[cfg(target_os = "linux")]
mod ui_groups;
#[cfg(target_os = "linux")]
mod ui_keys;
#[cfg(target_os = "linux")]
mod ui_pace;
#[cfg(target_os = "linux")]
mod ui_pins;
#[cfg(target_os = "linux")]
mod ui_screens;
mod version;
mod vmmap_cli;
mod vmmap_pid;
#[cfg(target_os = "linux")]
mod watch_summary;
#[cfg(target_os = "linux")]
mod width;
#[cfg(target_os = "linux")]
mod wss;
