//! `memtally serve`: the metrics over HTTP for Prometheus to scrape.
//!
//! - `GET /metrics`: Prometheus text format 0.0.4, or OpenMetrics 1.0 when
//!   the `Accept` header prefers `application/openmetrics-text` (as
//!   Prometheus does). `GET /`: a short page linking to it. `HEAD` works
//!   on both; other methods get 405, other paths 404.
//! - A scan younger than `--min-interval` is reused, and only one scan runs
//!   at a time: a burst of scrapes costs the host one scan.
//! - Hardening: loopback by default; request heads are bounded in size
//!   (431) and in header count, and must arrive within a few seconds;
//!   request bodies are never read (one announced gets 413); which
//!   connections are served, and for how long, is [`admit`]'s (a cap
//!   per peer, a head read whole before a serving place is taken, one
//!   request per connection). At most a few scrapes wait for a scan at
//!   once; more get 503 with `retry-after` at once. `--min-interval`
//!   is at least [`MIN_INTERVAL_FLOOR`]. Connections are tasks on a
//!   small tokio runtime, so a client that sends nothing holds no thread
//!   and cannot delay another scrape. Nothing here starts a process.
//! - SIGINT, SIGTERM, SIGHUP: the listener closes, answers under way get
//!   a moment to finish, and the command ends (see [`crate::signal`]).

mod admit;
mod head;
mod limits;
mod own;
mod web_config;

use std::convert::Infallible;
use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use clap::Args;
use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::header::{
    HeaderValue, ACCEPT, ACCEPT_ENCODING, ALLOW, CONTENT_ENCODING, CONTENT_LENGTH, CONTENT_TYPE,
    TRANSFER_ENCODING, VARY,
};
use hyper::{Method, Request, Response, StatusCode};

use memtally_core::source::ProcRoot;
use memtally_core::usecase::metrics::{collect, MetricsOptions};
use memtally_core::{Error, Result};

use crate::cli::metrics::MetricsArgs;
use crate::render::errors::Worded;
use crate::render::prometheus::{encode_registry, registry, Exposition};

use limits::Slot;

/// Loopback only unless `--listen` says otherwise (9464: the port the
/// OpenTelemetry Prometheus exporter uses by default).
pub const DEFAULT_LISTEN: &str = "127.0.0.1:9464";
/// Largest request head (request line + headers) accepted, bytes.
pub const MAX_HEADER_BYTES: usize = 8 * 1024;
/// Most headers accepted in one request.
pub const MAX_HEADERS: usize = 64;
/// The shortest `--min-interval`: below it one client asking without a
/// pause keeps a core scanning (`0s` let one burn 133% CPU).
pub const MIN_INTERVAL_FLOOR: Duration = Duration::from_secs(1);
/// Scrapes answered from a scan (one running or waited on) at once; more
/// get 503 with `retry-after` at once instead of queueing behind a slow
/// scan. A scrape that gave up at [`SCAN_DEADLINE`] counts until the
/// scan it waited for ends. Also the size of the blocking thread pool.
pub const MAX_SCRAPES_IN_FLIGHT: usize = 4;
/// How long a scrape waits for a scan: past that it gets the last good
/// result marked stale (`x-memtally-stale`), or 503 when there is none.
/// Under Prometheus's default scrape timeout (10 s).
pub const SCAN_DEADLINE: Duration = Duration::from_secs(8);
/// bcrypt checks of credentials not seen before, at once (tens of
/// milliseconds each); more get 503 at once, so wrong passwords sent in a
/// flood cost at most this many threads.
pub const MAX_AUTH_CHECKS: usize = 2;

#[derive(Debug, Args)]
pub struct ServeArgs {
    #[command(flatten)]
    pub metrics: MetricsArgs,

    /// Address to listen on. The default is loopback only: give
    /// 0.0.0.0:9464 (or an interface's address) to let other hosts scrape.
    #[arg(long, value_name = "ADDR", default_value = DEFAULT_LISTEN)]
    pub listen: SocketAddr,

    /// Reuse a scan younger than this (`5s`, `1m`; at least `1s`) instead
    /// of scanning again, so a burst of scrapes cannot load the host.
    #[arg(long, value_name = "DURATION", default_value = "5s", value_parser = min_interval)]
    pub min_interval: Duration,

    /// TLS and basic auth, in the Prometheus exporter-toolkit's web
    /// config format (YAML: tls_server_config with cert_file and key_file;
    /// basic_auth_users mapping names to bcrypt hashes). Other keys are
    /// refused.
    #[arg(long = "web.config.file", value_name = "FILE")]
    pub web_config_file: Option<PathBuf>,
}

/// `--min-interval`: a duration of at least [`MIN_INTERVAL_FLOOR`].
fn min_interval(s: &str) -> std::result::Result<Duration, String> {
    let d = crate::cli::duration::duration(s)?;
    if d < MIN_INTERVAL_FLOOR {
        return Err(format!(
            "{s} is too short: scans would follow each other without a pause and keep a core busy; give at least 1s"
        ));
    }
    Ok(d)
}

/// The last scan, encoded both ways, each plain and gzipped.
struct Cached {
    at: Instant,
    text: Encoded,
    openmetrics: Encoded,
}

/// One exposition, plain and gzipped: compressed once per scan, not per
/// scrape (a scrape is answered from the cache up to --min-interval).
struct Encoded {
    plain: Bytes,
    gzip: Bytes,
}

impl Encoded {
    fn new(text: String) -> Encoded {
        use flate2::write::GzEncoder;
        let mut gz =
            GzEncoder::new(Vec::with_capacity(text.len() / 6), flate2::Compression::default());
        // Writing into a Vec cannot fail.
        let gzip = gz.write_all(text.as_bytes()).and_then(|()| gz.finish()).unwrap_or_default();
        Encoded { plain: Bytes::from(text), gzip: Bytes::from(gzip) }
    }
}

struct State {
    root: ProcRoot,
    /// Scrapes waiting for a scan (see [`MAX_SCRAPES_IN_FLIGHT`]).
    in_flight: Arc<AtomicUsize>,
    opts: MetricsOptions,
    min_interval: Duration,
    /// Held during a scan: concurrent scrapes wait for it and share it.
    last: Mutex<Option<Arc<Cached>>>,
    /// Held by the one scan running: `last` stays readable meanwhile.
    scanning: Mutex<()>,
    /// When serve began, seconds since the epoch (`process_start_time_seconds`).
    started: f64,
    /// `basic_auth_users` of `--web.config.file`: who may be answered.
    users: Option<web_config::Users>,
    /// bcrypt checks under way (see [`MAX_AUTH_CHECKS`]).
    auth_checks: Arc<AtomicUsize>,
}

impl State {
    fn last(&self) -> Option<Arc<Cached>> {
        self.last.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// The last scan if it is young enough to reuse without scanning.
    fn fresh(&self) -> Option<Arc<Cached>> {
        self.last().filter(|c| c.at.elapsed() < self.min_interval)
    }

    fn current(&self) -> Result<Arc<Cached>> {
        let _scan = self.scanning.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(c) = self.fresh() {
            return Ok(c);
        }
        let m = collect(&self.root, &self.opts)?;
        let mut reg = registry(&m);
        own::register(&mut reg, &own::Own::read(), self.started);
        let c = Arc::new(Cached {
            at: Instant::now(),
            text: Encoded::new(encode_registry(&reg, Exposition::Text)),
            openmetrics: Encoded::new(encode_registry(&reg, Exposition::OpenMetrics)),
        });
        *self.last.lock().unwrap_or_else(PoisonError::into_inner) = Some(Arc::clone(&c));
        Ok(c)
    }
}

/// What memtally's privileges leave out of the figures `serve` and
/// `export` publish, for the line they print at start: on the live system
/// only (a recorded tree's files say nothing about this host's
/// privileges).
pub(crate) fn start_withheld(root: &ProcRoot) -> Option<String> {
    if !root.is_procfs() {
        return None;
    }
    let all = memtally_core::source::withheld();
    let published: Vec<_> = all.into_iter().filter(|w| w.in_process_figures()).collect();
    crate::render::notes::withheld(&published)
}

pub fn run(root: &ProcRoot, args: &ServeArgs, out: &mut dyn Write) -> Result<()> {
    // Bad selection options fail now rather than at the first scrape.
    let opts = args.metrics.options_for(root)?;
    let web = match &args.web_config_file {
        Some(path) => web_config::WebConfig::load(path)?,
        None => web_config::WebConfig { tls: None, users: None },
    };
    let listener = std::net::TcpListener::bind(args.listen)
        .map_err(|e| Error::io(format!("--listen {}", args.listen), e))?;
    let addr = listener.local_addr().map_err(|e| Error::io("listening socket", e))?;
    listener.set_nonblocking(true).map_err(|e| Error::io("listening socket", e))?;
    let scheme = if web.tls.is_some() { "https" } else { "http" };
    writeln!(out, "memtally: serving {scheme}://{addr}/metrics")
        .and_then(|()| out.flush())
        .map_err(|e| Error::io("standard output", e))?;
    if let Some(w) = start_withheld(root) {
        eprintln!("memtally: its {w}");
    }
    if !addr.ip().is_loopback() {
        eprintln!(
            "memtally: warning: listening on {addr}, beyond loopback: anyone who can reach it reads every process's name, command line owner and memory"
        );
    }
    let state = Arc::new(State {
        root: root.clone(),
        opts,
        in_flight: Arc::new(AtomicUsize::new(0)),
        min_interval: args.min_interval,
        last: Mutex::new(None),
        scanning: Mutex::new(()),
        started: own::now_unix(),
        users: web.users,
        auth_checks: Arc::new(AtomicUsize::new(0)),
    });
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .max_blocking_threads(MAX_SCRAPES_IN_FLIGHT + MAX_AUTH_CHECKS)
        .build()
        .map_err(|e| Error::io("tokio runtime", e))?;
    let served = rt.block_on(admit::accept_loop(listener, state, web.tls));
    // A scan still running after a signal is not waited for.
    rt.shutdown_timeout(Duration::from_millis(100));
    served.map_err(|e| Error::io(addr.to_string(), e))
}

type Reply = Response<Full<Bytes>>;

fn reply(status: StatusCode, content_type: &'static str, body: impl Into<Bytes>) -> Reply {
    let mut r = Response::new(Full::new(body.into()));
    *r.status_mut() = status;
    r.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    r.headers_mut().insert("x-content-type-options", HeaderValue::from_static("nosniff"));
    r
}

const PLAIN: &str = "text/plain; charset=utf-8";

const INDEX: &str = concat!(
    "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>memtally</title></head>\n",
    "<body><h1>memtally</h1>\n<p>Where does this process's memory really go? ",
    "Per-process PSS, USS, RSS, swap and dirty bytes for Prometheus.</p>\n",
    "<p><a href=\"/metrics\">/metrics</a></p>\n<p>memtally ",
    env!("CARGO_PKG_VERSION"),
    "</p></body></html>\n"
);

async fn handle(
    state: Arc<State>,
    req: Request<Incoming>,
) -> std::result::Result<Reply, Infallible> {
    if let Some(refused) = authorize(&state, &req).await {
        return Ok(refused);
    }
    let path = req.uri().path();
    if path != "/" && path != "/metrics" {
        return Ok(reply(StatusCode::NOT_FOUND, PLAIN, "not found: try /metrics\n"));
    }
    if req.method() != Method::GET && req.method() != Method::HEAD {
        let mut r = reply(StatusCode::METHOD_NOT_ALLOWED, PLAIN, "method not allowed: use GET\n");
        r.headers_mut().insert(ALLOW, HeaderValue::from_static("GET, HEAD"));
        return Ok(r);
    }
    let announced_body = req.headers().contains_key(TRANSFER_ENCODING)
        || req
            .headers()
            .get(CONTENT_LENGTH)
            .is_some_and(|v| v.to_str().ok().and_then(|s| s.trim().parse::<u64>().ok()) != Some(0));
    if announced_body {
        let mut r = reply(StatusCode::PAYLOAD_TOO_LARGE, PLAIN, "requests carry no body here\n");
        r.headers_mut().insert(hyper::header::CONNECTION, HeaderValue::from_static("close"));
        return Ok(r);
    }
    if path == "/" {
        return Ok(reply(StatusCode::OK, "text/html; charset=utf-8", INDEX));
    }
    let format = negotiate(req.headers().get_all(ACCEPT).iter().filter_map(|v| v.to_str().ok()));
    let gzip =
        accepts_gzip(req.headers().get_all(ACCEPT_ENCODING).iter().filter_map(|v| v.to_str().ok()));
    let format = (format, gzip);
    // A recent scan is answered without waiting for anything.
    if let Some(c) = state.fresh() {
        return Ok(metrics(&c, format));
    }
    let Some(ticket) = Slot::take(&state.in_flight, MAX_SCRAPES_IN_FLIGHT) else {
        let mut r = reply(
            StatusCode::SERVICE_UNAVAILABLE,
            PLAIN,
            "busy: too many scrapes waiting for a scan now; try again\n",
        );
        r.headers_mut().insert("retry-after", HeaderValue::from_static("1"));
        return Ok(r);
    };
    // Held by the scan until it ends, even when this scrape gives up on it.
    let scan = tokio::task::spawn_blocking({
        let state = Arc::clone(&state);
        move || {
            let _ticket = ticket;
            state.current()
        }
    });
    let scanned = match tokio::time::timeout(SCAN_DEADLINE, scan).await {
        Ok(done) => done,
        Err(_) => {
            let secs = SCAN_DEADLINE.as_secs();
            return Ok(match state.last() {
                Some(c) => {
                    let mut r = metrics(&c, format);
                    let age = format!(
                        "scan still running after {secs} s; result from {} s ago",
                        c.at.elapsed().as_secs()
                    );
                    if let Ok(v) = HeaderValue::from_str(&age) {
                        r.headers_mut().insert("x-memtally-stale", v);
                    }
                    r
                }
                None => {
                    let mut r = reply(
                        StatusCode::SERVICE_UNAVAILABLE,
                        PLAIN,
                        format!("scan still running after {secs} s; try again\n"),
                    );
                    r.headers_mut().insert("retry-after", HeaderValue::from_static("5"));
                    r
                }
            });
        }
    };
    Ok(match scanned {
        Ok(Ok(c)) => metrics(&c, format),
        Ok(Err(e)) => {
            let e = Worded(&e);
            eprintln!("memtally: scan failed: {e}");
            reply(StatusCode::INTERNAL_SERVER_ERROR, PLAIN, format!("scan failed: {e}\n"))
        }
        Err(e) => {
            eprintln!("memtally: scan failed: {e}");
            reply(StatusCode::INTERNAL_SERVER_ERROR, PLAIN, "scan failed\n")
        }
    })
}

/// `None` when the request may be answered (no `basic_auth_users`, or
/// its credentials are right); else the answer: 401, or 503 when too many
/// credentials are being checked already.
async fn authorize(state: &Arc<State>, req: &Request<Incoming>) -> Option<Reply> {
    let users = state.users.as_ref()?;
    let auth = req.headers().get(hyper::header::AUTHORIZATION).map(|v| v.as_bytes().to_vec());
    let verdict = match users.check_known(auth.as_deref()) {
        Some(v) => v,
        None => {
            let Some(ticket) = Slot::take(&state.auth_checks, MAX_AUTH_CHECKS) else {
                let mut r = reply(
                    StatusCode::SERVICE_UNAVAILABLE,
                    PLAIN,
                    "busy: too many logins being checked now; try again\n",
                );
                r.headers_mut().insert("retry-after", HeaderValue::from_static("1"));
                return Some(r);
            };
            let state = Arc::clone(state);
            tokio::task::spawn_blocking(move || {
                let _ticket = ticket;
                state.users.as_ref().map(|u| u.check(auth.as_deref()))
            })
            .await
            .ok()
            .flatten()
            .unwrap_or(web_config::Verdict::Refused)
        }
    };
    match verdict {
        web_config::Verdict::Allowed => None,
        web_config::Verdict::Refused => {
            let mut r = reply(
                StatusCode::UNAUTHORIZED,
                PLAIN,
                "unauthorized: this exporter asks for a user name and password\n",
            );
            r.headers_mut().insert(
                hyper::header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Basic realm=\"memtally\""),
            );
            Some(r)
        }
    }
}

/// A scan's metrics as a 200 in `format`, gzipped where the client
/// accepts it (as Prometheus always does).
fn metrics(c: &Cached, (format, gzip): (Exposition, bool)) -> Reply {
    let encoded = match format {
        Exposition::Text => &c.text,
        Exposition::OpenMetrics => &c.openmetrics,
    };
    let body = if gzip { encoded.gzip.clone() } else { encoded.plain.clone() };
    let mut r = reply(StatusCode::OK, format.content_type(), body);
    if gzip {
        r.headers_mut().insert(CONTENT_ENCODING, HeaderValue::from_static("gzip"));
    }
    r.headers_mut().insert(VARY, HeaderValue::from_static("accept-encoding"));
    r
}

/// Whether the `Accept-Encoding` values accept gzip: `gzip` (or `x-gzip`,
/// or `*`) with a quality above zero. Without the header: no.
pub fn accepts_gzip<'a>(values: impl Iterator<Item = &'a str>) -> bool {
    let (mut gzip, mut star) = (None, None);
    for coding in values.flat_map(|v| v.split(',')) {
        let mut parts = coding.split(';');
        let name = parts.next().unwrap_or("").trim().to_ascii_lowercase();
        let q = parts
            .filter_map(|p| p.trim().strip_prefix("q="))
            .find_map(|q| q.trim().parse::<f32>().ok())
            .unwrap_or(1.0);
        match name.as_str() {
            "gzip" | "x-gzip" => gzip = Some(gzip.map_or(q, |g: f32| g.max(q))),
            "*" => star = Some(q),
            _ => {}
        }
    }
    gzip.or(star).is_some_and(|q| q > 0.0)
}

/// OpenMetrics when the `Accept` values rank `application/openmetrics-text`
/// above zero and at least as high as every other type they accept;
/// the text format otherwise (also with no `Accept` at all).
pub fn negotiate<'a>(accept: impl Iterator<Item = &'a str>) -> Exposition {
    let (mut om, mut other) = (0.0f32, 0.0f32);
    for range in accept.flat_map(|v| v.split(',')) {
        let mut parts = range.split(';');
        let media = parts.next().unwrap_or("").trim().to_ascii_lowercase();
        if media.is_empty() {
            continue;
        }
        let q = parts
            .filter_map(|p| p.trim().strip_prefix("q="))
            .find_map(|q| q.trim().parse::<f32>().ok())
            .unwrap_or(1.0)
            .clamp(0.0, 1.0);
        if media == "application/openmetrics-text" {
            om = om.max(q);
        } else {
            other = other.max(q);
        }
    }
    if om > 0.0 && om >= other {
        Exposition::OpenMetrics
    } else {
        Exposition::Text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negotiation_follows_the_quality_values() {
        let n = |s: &str| negotiate(std::iter::once(s));
        // What Prometheus 2.x sends.
        assert_eq!(
            n("application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"),
            Exposition::OpenMetrics
        );
        assert_eq!(n("application/openmetrics-text"), Exposition::OpenMetrics);
        assert_eq!(n("*/*"), Exposition::Text);
        assert_eq!(n("text/plain;version=0.0.4"), Exposition::Text);
        assert_eq!(n("application/openmetrics-text;q=0"), Exposition::Text);
        assert_eq!(n("text/plain, application/openmetrics-text;q=0.5"), Exposition::Text);
        assert_eq!(n(""), Exposition::Text);
        assert_eq!(negotiate(std::iter::empty()), Exposition::Text);
        assert_eq!(
            negotiate(["text/plain;q=0.2", "Application/OpenMetrics-Text; q=0.9"].into_iter()),
            Exposition::OpenMetrics
        );
    }

    #[test]
    fn gzip_is_sent_where_accepted() {
        let g = |s: &str| accepts_gzip(std::iter::once(s));
        // What Prometheus sends.
        assert!(g("gzip"));
        assert!(g("gzip, deflate, br"));
        assert!(g("br;q=1.0, gzip;q=0.8, *;q=0.1"));
        assert!(g("*"));
        assert!(!g("gzip;q=0"));
        assert!(!g("identity"));
        assert!(!g("br, *;q=0"));
        assert!(!g("gzip;q=0, *"));
        assert!(!accepts_gzip(std::iter::empty()));
    }

    #[test]
    fn a_scan_is_gzipped_once_and_unzips_to_itself() {
        let e = Encoded::new("memtally_x 1\n".repeat(1000));
        assert!(e.gzip.len() < e.plain.len() / 10, "{} {}", e.gzip.len(), e.plain.len());
        let mut back = String::new();
        std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&e.gzip[..]), &mut back)
            .unwrap();
        assert_eq!(back.as_bytes(), &e.plain[..]);
    }

    #[test]
    fn listens_on_loopback_by_default() {
        use clap::Parser;
        let cli = crate::cli::Cli::try_parse_from(["memtally", "serve"]).unwrap();
        let Some(crate::cli::Command::Serve(args)) = cli.command else { panic!("not serve") };
        assert!(args.listen.ip().is_loopback(), "{}", args.listen);
        assert_eq!(args.listen.port(), 9464);
        assert_eq!(args.metrics.top, 50);
    }

    #[test]
    fn min_interval_is_at_least_a_second() {
        assert_eq!(min_interval("1s"), Ok(Duration::from_secs(1)));
        assert_eq!(min_interval("1m"), Ok(Duration::from_secs(60)));
        for short in ["0s", "999ms", "10ms"] {
            assert!(min_interval(short).unwrap_err().contains("at least 1s"), "{short}");
        }
        assert!(min_interval("15 parsecs").is_err());
    }
}
