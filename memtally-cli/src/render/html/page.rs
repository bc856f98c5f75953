//! The page's skeleton: head (content security policy, inline style),
//! body sections in order, the embedded snapshot, and the small script
//! (zoom, labels, breadcrumbs, table sorting). The policy allows only the
//! page's own style and script, by their SHA-256: no request can leave
//! the file, and a string of the data that looked like markup could run
//! nothing.

use base64::Engine as _;
use sha2::{Digest, Sha256};

use super::esc;

pub const STYLE: &str = r#"
body{font:14px/1.4 system-ui,sans-serif;margin:0 auto;max-width:1240px;padding:0 12px;color:#222;background:#fff}
h1{font-size:22px;margin:14px 0 4px}h2{font-size:18px;margin:22px 0 6px;border-bottom:1px solid #ddd}h3{font-size:15px;margin:14px 0 4px}
.meta{color:#555;margin:0}#headline{font-size:16px;margin:8px 0 2px}.redacted{font-weight:bold}.note{background:#fff7e0;border-left:3px solid #f1ce63;padding:4px 8px;margin:4px 0}
table{border-collapse:collapse;font-size:13px;margin:4px 0}th,td{padding:2px 8px;border-bottom:1px solid #eee;text-align:left}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}th{background:#f4f4f4;cursor:pointer;user-select:none}
tr.unread td{color:#777;font-style:italic}.legend{display:flex;flex-wrap:wrap;gap:4px 14px;padding:0;list-style:none;font-size:13px}
.sw{display:inline-block;width:12px;height:12px;vertical-align:-1px;margin-right:4px;border:1px solid #999}
svg text{font:11px system-ui,sans-serif;fill:#111;pointer-events:none}svg text.d1{font-weight:bold}
#treemap rect{cursor:pointer}#crumbs a{margin-right:4px}tr.other td{color:#555;font-style:italic}#sel{min-height:1.4em;font-weight:bold}
code{font-size:12px;word-break:break-all}nav a{margin-right:10px}
td.cmd code{display:-webkit-box;-webkit-box-orient:vertical;-webkit-line-clamp:3;overflow:hidden}td.cmd:hover code{display:block}
.s-clean{background:#8ab8e6}.s-half{background:#b06f87}.s-dirty{background:#d62728}.s-unk{background:#b0b8c0}
.multiples{display:flex;flex-wrap:wrap;gap:10px}.multiple{margin:0;width:380px}.multiple figcaption{font-size:12px}.s-small{background:#c9c9c9}.s-grew-not{background:#2ca02c}p.over{color:#a4161a}.s-unread{background:repeating-linear-gradient(45deg,#888 0 2px,#e0e0e0 2px 6px)}
@media print{nav,#crumbs,.noprint{display:none}body{max-width:none}h2{break-after:avoid}table{break-inside:auto}}
"#;

pub const SCRIPT: &str = r#"
(function(){
var all=document.getElementById('tm-all');if(all){
var lab=document.getElementById('tm-labels'),sel=document.getElementById('sel'),crumbs=document.getElementById('crumbs');
var W=1200,H=640,cur='n0',ns='http://www.w3.org/2000/svg';
function node(id){var e=id&&document.getElementById(id);return e&&e.parentNode===all?e:null;}
function R(e){return{x:+e.getAttribute('x'),y:+e.getAttribute('y'),w:+e.getAttribute('width'),h:+e.getAttribute('height')};}
function hum(b){var u=['B','K','M','G','T'],i=0;if(!b)return'0';if(b<1024)return b+'B';while(b>=1024&&i<4){b/=1024;i++;}return(b<100?b.toFixed(1):b.toFixed(0))+u[i];}
function up(e){return node(e.getAttribute('data-parent'));}
function zoom(id){var e=node(id)||node('n0');cur=e.id;var r=R(e),sx=W/Math.max(r.w,1e-6),sy=H/Math.max(r.h,1e-6);
all.setAttribute('transform','matrix('+sx+' 0 0 '+sy+' '+(-r.x*sx)+' '+(-r.y*sy)+')');
while(lab.firstChild)lab.removeChild(lab.firstChild);
var kids=all.querySelectorAll('rect[data-parent="'+e.id+'"]');
(function down(ks,d){[].forEach.call(ks,function(k){label(k,r,sx,sy,d);if(d<3)down(all.querySelectorAll('rect[data-parent="'+k.id+'"]'),d+1);});})(kids,1);
while(crumbs.firstChild)crumbs.removeChild(crumbs.firstChild);
var path=[];for(var p=e;p;p=up(p))path.unshift(p);
path.forEach(function(p){var a=document.createElement('a');a.href='#'+p.id;a.textContent=p.getAttribute('data-label');crumbs.appendChild(a);crumbs.appendChild(document.createTextNode(' \u203a '));});
sel.textContent=e.querySelector('title').textContent;sel.setAttribute('data-node',e.id);
var f=e.getAttribute('data-faults');if(f){var a=document.createElement('a');a.href='#'+f;a.textContent=' \u2192 the stacks that filled it';sel.appendChild(a);}}
function label(k,r,sx,sy,d){var b=R(k),x=(b.x-r.x)*sx,y=(b.y-r.y)*sy,w=b.w*sx,h=b.h*sy;if(w<46||h<13)return;
if(all.querySelector('rect[data-parent="'+k.id+'"]')&&!(b.h>40&&b.w>60))return;var t=document.createElementNS(ns,'text');t.setAttribute('x',x+3);t.setAttribute('y',y+11);
t.setAttribute('class','d'+d);var s=k.getAttribute('data-label')+' '+hum(+k.getAttribute('data-v')),n=Math.max(1,Math.floor((w-6)/6.5));t.textContent=s.length>n?s.slice(0,n-1)+'\u2026':s;lab.appendChild(t);}
document.getElementById('treemap').addEventListener('click',function(ev){var t=ev.target;if(!node(t.id))return;
for(var p=t;p;p=up(p)){if(p.getAttribute('data-parent')===cur){location.hash=p.id;return;}}});
window.addEventListener('hashchange',function(){if(node(location.hash.slice(1))){zoom(location.hash.slice(1));document.getElementById('map').scrollIntoView();}});
if(node(location.hash.slice(1))){document.getElementById('map').scrollIntoView();window.addEventListener('load',function(){document.getElementById('map').scrollIntoView();});}
zoom(location.hash.slice(1));}
[].forEach.call(document.querySelectorAll('table.sortable'),function(tb){[].forEach.call(tb.tHead.rows[0].cells,function(th,i){
th.tabIndex=0;th.addEventListener('click',function(){var body=tb.tBodies[0],rows=[].slice.call(body.rows),desc=th.getAttribute('aria-sort')!=='descending';
rows.sort(function(a,b){var x=a.cells[i].getAttribute('data-v'),y=b.cells[i].getAttribute('data-v');
var c=(x!==null&&y!==null)?(+x)-(+y):a.cells[i].textContent.localeCompare(b.cells[i].textContent);return desc?-c:c;});
rows.forEach(function(r){body.appendChild(r);});[].forEach.call(tb.tHead.rows[0].cells,function(o){o.removeAttribute('aria-sort');});
th.setAttribute('aria-sort',desc?'descending':'ascending');});});});
})();
"#;

/// `'sha256-…'` of `text`, as a content security policy names it.
pub fn csp_hash(text: &str) -> String {
    let digest = Sha256::digest(text.as_bytes());
    format!("'sha256-{}'", base64::engine::general_purpose::STANDARD.encode(digest))
}

/// The whole page around `body` (the sections, already written), the
/// embedded snapshot (`json`) and page-fault recording (`faults`), if
/// any, every `<` in them already escaped.
pub fn page(title: &str, body: &str, json: Option<&str>, faults: Option<&str>) -> String {
    use memtally_core::model::{FAULTS_ELEMENT, SNAPSHOT_ELEMENT};
    let mut data = json.map_or_else(String::new, |j| format!("{SNAPSHOT_ELEMENT}{j}</script>\n"));
    if let Some(f) = faults {
        data.push_str(&format!("{FAULTS_ELEMENT}{f}</script>\n"));
    }
    let policy = format!(
        "default-src 'none'; style-src {}; script-src {}; img-src data:; base-uri 'none'; form-action 'none'",
        csp_hash(STYLE),
        csp_hash(SCRIPT)
    );
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<meta http-equiv=\"Content-Security-Policy\" content=\"{policy}\">\n<meta name=\"viewport\" content=\"width=device-width\">\n<meta name=\"generator\" content=\"memtally {}\">\n<title>{}</title>\n<style>{STYLE}</style></head>\n<body>\n{body}\n{data}<script>{SCRIPT}</script>\n</body></html>\n",
        env!("CARGO_PKG_VERSION"),
        esc(title),
    )
}
