//! RFC 6570 URI templates: expansion, and matching a URI back to variables.
//!
//! A resource template such as `file:///{path}` or `weather://{city}/today`
//! must be matched against the URI a client reads, which no maintained crate
//! does, so this module parses templates once and both expands and matches
//! them. Matching supports every operator of level 4; where a template is
//! ambiguous (two adjacent expressions), the earlier expression takes the
//! shortest value that lets the rest match.

use std::collections::BTreeMap;
use std::fmt;

/// A parsed RFC 6570 URI template.
///
/// # Examples
/// ```
/// use mcp_server::UriTemplate;
/// let template = UriTemplate::parse("weather://{city}/forecast{?days}").unwrap();
/// let vars = template.match_uri("weather://Paris/forecast?days=3").unwrap();
/// assert_eq!(vars["city"], "Paris");
/// assert_eq!(vars["days"], "3");
/// assert_eq!(template.expand(|name| (name == "city").then(|| "Oslo".to_owned())), "weather://Oslo/forecast");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UriTemplate {
    source: String,
    parts: Vec<Part>,
}

/// A template that is not valid RFC 6570.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UriTemplateError {
    /// The template as given.
    pub template: String,
    /// What is wrong with it.
    pub reason: String,
}

impl fmt::Display for UriTemplateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid URI template `{}`: {}",
            self.template, self.reason
        )
    }
}

impl std::error::Error for UriTemplateError {}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Literal(String),
    Expression(Expression),
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Expression {
    operator: Operator,
    variables: Vec<VarSpec>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct VarSpec {
    name: String,
    prefix: Option<usize>,
    explode: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Operator {
    Simple,
    Reserved,
    Fragment,
    Label,
    Path,
    PathParameter,
    Query,
    QueryContinuation,
}

impl Operator {
    fn from_char(c: char) -> Option<Operator> {
        Some(match c {
            '+' => Operator::Reserved,
            '#' => Operator::Fragment,
            '.' => Operator::Label,
            '/' => Operator::Path,
            ';' => Operator::PathParameter,
            '?' => Operator::Query,
            '&' => Operator::QueryContinuation,
            _ => return None,
        })
    }

    /// The text written before the first value (RFC 6570 appendix A "first").
    fn first(self) -> &'static str {
        match self {
            Operator::Simple | Operator::Reserved => "",
            Operator::Fragment => "#",
            Operator::Label => ".",
            Operator::Path => "/",
            Operator::PathParameter => ";",
            Operator::Query => "?",
            Operator::QueryContinuation => "&",
        }
    }

    /// The separator between values ("sep").
    fn separator(self) -> char {
        match self {
            Operator::Simple | Operator::Reserved | Operator::Fragment => ',',
            Operator::Label => '.',
            Operator::Path => '/',
            Operator::PathParameter => ';',
            Operator::Query | Operator::QueryContinuation => '&',
        }
    }

    /// Whether values are written as `name=value` ("named").
    fn is_named(self) -> bool {
        matches!(
            self,
            Operator::PathParameter | Operator::Query | Operator::QueryContinuation
        )
    }

    /// Whether reserved characters pass through unencoded ("allow").
    fn allows_reserved(self) -> bool {
        matches!(self, Operator::Reserved | Operator::Fragment)
    }
}

fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

fn is_reserved(b: u8) -> bool {
    matches!(
        b,
        b':' | b'/'
            | b'?'
            | b'#'
            | b'['
            | b']'
            | b'@'
            | b'!'
            | b'$'
            | b'&'
            | b'\''
            | b'('
            | b')'
            | b'*'
            | b'+'
            | b','
            | b';'
            | b'='
    )
}

fn encode(value: &str, allow_reserved: bool, out: &mut String) {
    let bytes = value.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let keep_pct = allow_reserved
            && b == b'%'
            && bytes.get(i + 1).is_some_and(u8::is_ascii_hexdigit)
            && bytes.get(i + 2).is_some_and(u8::is_ascii_hexdigit);
        if is_unreserved(b) || (allow_reserved && is_reserved(b)) || keep_pct {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
        i += 1;
    }
}

fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3])
                .ok()
                .and_then(|h| u8::from_str_radix(h, 16).ok());
            if let Some(b) = hex {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

impl UriTemplate {
    /// Parses a template.
    ///
    /// # Errors
    /// When a `{` is not closed, an expression is empty, a variable name has
    /// characters RFC 6570 does not allow, or a prefix length is not 1..=9999.
    pub fn parse(template: &str) -> Result<UriTemplate, UriTemplateError> {
        let error = |reason: String| UriTemplateError {
            template: template.to_owned(),
            reason,
        };
        let mut parts = vec![];
        let mut rest = template;
        while !rest.is_empty() {
            match rest.find('{') {
                Some(0) => {
                    let end = rest.find('}').ok_or_else(|| {
                        error("an expression opened with `{` is never closed".into())
                    })?;
                    let body = &rest[1..end];
                    parts.push(Part::Expression(
                        Self::parse_expression(body).map_err(error)?,
                    ));
                    rest = &rest[end + 1..];
                }
                Some(start) => {
                    let literal = &rest[..start];
                    if literal.contains('}') {
                        return Err(error("a `}` has no matching `{`".into()));
                    }
                    parts.push(Part::Literal(literal.to_owned()));
                    rest = &rest[start..];
                }
                None => {
                    if rest.contains('}') {
                        return Err(error("a `}` has no matching `{`".into()));
                    }
                    parts.push(Part::Literal(rest.to_owned()));
                    rest = "";
                }
            }
        }
        Ok(UriTemplate {
            source: template.to_owned(),
            parts,
        })
    }

    fn parse_expression(body: &str) -> Result<Expression, String> {
        let mut chars = body.chars();
        let (operator, list) = match chars.next().and_then(Operator::from_char) {
            Some(op) => (op, chars.as_str()),
            None => (Operator::Simple, body),
        };
        if list.is_empty() {
            return Err("an expression has no variable".into());
        }
        let mut variables = vec![];
        for spec in list.split(',') {
            let (name, prefix, explode) = if let Some(name) = spec.strip_suffix('*') {
                (name, None, true)
            } else if let Some((name, len)) = spec.split_once(':') {
                let len: usize = len
                    .parse()
                    .ok()
                    .filter(|n| (1..10000).contains(n))
                    .ok_or_else(|| format!("prefix length `{len}` is not 1 to 9999"))?;
                (name, Some(len), false)
            } else {
                (spec, None, false)
            };
            let valid = !name.is_empty()
                && name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.' || b == b'%');
            if !valid {
                return Err(format!("`{name}` is not a valid variable name"));
            }
            variables.push(VarSpec {
                name: name.to_owned(),
                prefix,
                explode,
            });
        }
        Ok(Expression {
            operator,
            variables,
        })
    }

    /// The template text.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// The names of the template's variables, in order of appearance.
    pub fn variables(&self) -> impl Iterator<Item = &str> {
        self.parts
            .iter()
            .flat_map(|part| match part {
                Part::Literal(_) => [].iter(),
                Part::Expression(e) => e.variables.iter(),
            })
            .map(|v| v.name.as_str())
    }

    /// Expands the template with string values; a variable `lookup` returns
    /// `None` for is left out, as RFC 6570 says for undefined variables.
    pub fn expand(&self, lookup: impl Fn(&str) -> Option<String>) -> String {
        let mut out = String::new();
        for part in &self.parts {
            match part {
                Part::Literal(text) => out.push_str(text),
                Part::Expression(expr) => {
                    let mut first = true;
                    for var in &expr.variables {
                        let Some(value) = lookup(&var.name) else {
                            continue;
                        };
                        out.push_str(if first { expr.operator.first() } else { "" });
                        if !first {
                            out.push(expr.operator.separator());
                        }
                        first = false;
                        let value: String = match var.prefix {
                            Some(n) => value.chars().take(n).collect(),
                            None => value,
                        };
                        if expr.operator.is_named() {
                            out.push_str(&var.name);
                            if value.is_empty() && expr.operator == Operator::PathParameter {
                                continue;
                            }
                            out.push('=');
                        }
                        encode(&value, expr.operator.allows_reserved(), &mut out);
                    }
                }
            }
        }
        out
    }

    /// Matches `uri` against the template and returns each variable's value,
    /// percent-decoded. Variables absent from the URI (an optional query
    /// parameter, say) are absent from the map.
    ///
    /// Returns `None` when the URI does not fit the template. The URI is
    /// the client's, so the work is bounded: about a million steps, plus 16
    /// per byte of the URI, times one for every four expressions of the
    /// template (its author's choice, never the client's). Templates with
    /// a literal between expressions need a few steps per byte; a URI that
    /// would need more (only a long one, against expressions that can each
    /// take the same text, such as `{+a}/{+b}/{+c}`) is reported as not
    /// fitting.
    pub fn match_uri(&self, uri: &str) -> Option<BTreeMap<String, String>> {
        // The search costs about as much per expression: the budget grows
        // with the expressions the server's author wrote (a quarter of the
        // base per expression past four), never with what a client sends.
        let expressions = self
            .parts
            .iter()
            .filter(|p| matches!(p, Part::Expression(_)))
            .count();
        let work = MATCH_WORK_PER_BYTE
            .saturating_mul(uri.len())
            .saturating_add(MATCH_WORK_FLOOR)
            .saturating_mul(expressions.div_ceil(4).max(1));
        Matching::new(self, uri, work).find()
    }

    /// Whether `rest` can start with part `index`: the literal that comes
    /// next, or nothing at the end of the template.
    fn may_start(&self, index: usize, rest: &str) -> bool {
        match self.parts.get(index) {
            None => rest.is_empty(),
            Some(Part::Literal(text)) => rest.starts_with(text.as_str()),
            Some(Part::Expression(_)) => true,
        }
    }

    /// How far an expression's text can reach: up to the first character its
    /// operator would have encoded.
    fn span_limit(operator: Operator, rest: &[u8]) -> usize {
        rest.iter()
            .position(|&b| {
                let allowed = is_unreserved(b)
                    || b == b'%'
                    || match operator {
                        Operator::Reserved => is_reserved(b) && b != b'#',
                        Operator::Fragment => is_reserved(b),
                        Operator::Simple => b == b',',
                        Operator::Label => b == b'.' || b == b',',
                        Operator::Path => b == b'/' || b == b',',
                        Operator::PathParameter => matches!(b, b';' | b'=' | b','),
                        Operator::Query | Operator::QueryContinuation => {
                            matches!(b, b'?' | b'&' | b'=' | b',')
                        }
                    };
                !allowed
            })
            .unwrap_or(rest.len())
    }

    fn read_expression(
        expr: &Expression,
        text: &str,
        found: &mut BTreeMap<String, String>,
    ) -> bool {
        let op = expr.operator;
        if text.is_empty() {
            // Every variable undefined: the expression expands to nothing.
            return true;
        }
        let Some(body) = text.strip_prefix(op.first()) else {
            return false;
        };
        if op.is_named() {
            let mut pairs: Vec<(&str, Option<&str>)> = vec![];
            for item in body.split(op.separator()) {
                match item.split_once('=') {
                    Some((k, v)) => pairs.push((k, Some(v))),
                    None => pairs.push((item, None)),
                }
            }
            for (key, value) in pairs {
                let Some(var) = expr.variables.iter().find(|v| v.name == key) else {
                    // A name the template does not know: not what it produced.
                    if expr.variables.iter().any(|v| v.explode) {
                        continue;
                    }
                    return false;
                };
                found.insert(var.name.clone(), decode(value.unwrap_or("")));
            }
            return true;
        }
        let values: Vec<&str> = if expr.variables.len() == 1 && expr.variables[0].explode {
            vec![body]
        } else {
            body.split(op.separator()).collect()
        };
        if values.len() > expr.variables.len() {
            // `{a,b}` reading "1,2,3": the last variable may hold a list.
            let (head, tail) = values.split_at(expr.variables.len() - 1);
            for (var, value) in expr.variables.iter().zip(head) {
                found.insert(var.name.clone(), decode(value));
            }
            let joined = tail.join(&op.separator().to_string());
            if let Some(last) = expr.variables.last() {
                found.insert(last.name.clone(), decode(&joined));
            }
            return true;
        }
        for (var, value) in expr.variables.iter().zip(values) {
            if let Some(n) = var.prefix {
                if decode(value).chars().count() > n {
                    return false;
                }
            }
            found.insert(var.name.clone(), decode(value));
        }
        true
    }
}

/// The steps [`UriTemplate::match_uri`] may take per byte of the URI, so a
/// long URI costs time in proportion to its length. Common templates
/// (`file:///{+path}`, `users://{id}/posts{?limit}`) need two or three.
const MATCH_WORK_PER_BYTE: usize = 16;
/// The steps any match may take: enough to try every split of a short URI
/// among many adjacent expressions.
const MATCH_WORK_FLOOR: usize = 1 << 20;

/// One run of [`UriTemplate::match_uri`]: a search over where each
/// expression ends, shortest first, that tries each (part, offset) once.
struct Matching<'a> {
    template: &'a UriTemplate,
    uri: &'a str,
    /// The steps left.
    work: usize,
    /// The bytes the expressions' scans have read: never more than the
    /// steps spent.
    scanned: usize,
    /// Bit `index * (uri.len() + 1) + offset` set: the parts from `index`
    /// on are known not to match `uri[offset..]`.
    failed: Vec<u64>,
    /// The same bits for the (index, offset) pairs known to match: each
    /// pair is searched once whichever way it ends, so a success below an
    /// expression whose own text does not read is not searched again.
    matched: Vec<u64>,
}

impl<'a> Matching<'a> {
    fn new(template: &'a UriTemplate, uri: &'a str, work: usize) -> Self {
        Self {
            template,
            uri,
            work,
            scanned: 0,
            failed: Vec::new(),
            matched: Vec::new(),
        }
    }

    /// Takes `steps` from the work left; `None` once it is spent, and
    /// from then on (the whole search gives up).
    fn spend(&mut self, steps: usize) -> Option<()> {
        match self.work.checked_sub(steps) {
            Some(left) => self.work = left,
            None => self.work = 0,
        }
        (self.work > 0 || steps == 0).then_some(())
    }

    fn bit(&self, index: usize, offset: usize) -> usize {
        index * (self.uri.len() + 1) + offset
    }

    fn is_set(bits: &[u64], bit: usize) -> bool {
        bits.get(bit / 64)
            .is_some_and(|word| word >> (bit % 64) & 1 == 1)
    }

    fn known_to_fail(&self, index: usize, offset: usize) -> bool {
        Self::is_set(&self.failed, self.bit(index, offset))
    }

    fn known_to_match(&self, index: usize, offset: usize) -> bool {
        Self::is_set(&self.matched, self.bit(index, offset))
    }

    /// Records whether the parts from `index` on match `uri[offset..]`.
    fn record(&mut self, index: usize, offset: usize, matches: bool) -> Option<()> {
        let bit = self.bit(index, offset);
        let words = (self.template.parts.len() * (self.uri.len() + 1)).div_ceil(64);
        let bits = if matches {
            &mut self.matched
        } else {
            &mut self.failed
        };
        if bits.is_empty() {
            *bits = vec![0; words];
        }
        bits[bit / 64] |= 1 << (bit % 64);
        matches.then_some(())
    }

    /// The ends the expression at `index` may take in `uri[offset..]`, the
    /// scan paid for: it reads no further than the steps left.
    fn limit(&mut self, expr: &Expression, offset: usize) -> Option<usize> {
        let rest = &self.uri[offset..];
        let scan = &rest.as_bytes()[..rest.len().min(self.work)];
        self.scanned += scan.len();
        let limit = UriTemplate::span_limit(expr.operator, scan);
        self.spend(limit)?;
        Some(limit)
    }

    /// The values `uri` gives the template's variables, if it matches.
    fn find(&mut self) -> Option<BTreeMap<String, String>> {
        self.matches(0, 0)?;
        Some(self.values())
    }

    /// Whether the parts from `index` on match `uri[offset..]`: a search
    /// over where each expression ends, shortest first, each (part, offset)
    /// searched once.
    fn matches(&mut self, index: usize, offset: usize) -> Option<()> {
        let rest = &self.uri[offset..];
        let Some(part) = self.template.parts.get(index) else {
            return rest.is_empty().then_some(());
        };
        let expr = match part {
            Part::Literal(text) => {
                rest.strip_prefix(text.as_str())?;
                return self.matches(index + 1, offset + text.len());
            }
            Part::Expression(expr) => expr,
        };
        if self.known_to_fail(index, offset) {
            return None;
        }
        if self.known_to_match(index, offset) {
            return Some(());
        }
        let limit = self.limit(expr, offset)?;
        for end in 0..=limit {
            if self.can_end(index, offset, end)? {
                return self.record(index, offset, true);
            }
        }
        self.record(index, offset, false)
    }

    /// Whether the expression at `index` can end at `offset + end`: the
    /// rest matches from there (matched before this expression is read:
    /// refusing an end costs a step, reading one its whole text) and its
    /// own text reads. `None` once the work is spent.
    fn can_end(&mut self, index: usize, offset: usize, end: usize) -> Option<bool> {
        let rest = &self.uri[offset..];
        if !rest.is_char_boundary(end)
            || !self.template.may_start(index + 1, &rest[end..])
            || self.known_to_fail(index + 1, offset + end)
        {
            return Some(false);
        }
        self.spend(1)?;
        if self.matches(index + 1, offset + end).is_none() {
            // A spent budget ends the whole search.
            return (self.work > 0).then_some(false);
        }
        self.spend(end)?;
        let Part::Expression(expr) = &self.template.parts[index] else {
            return Some(false);
        };
        Some(UriTemplate::read_expression(
            expr,
            &rest[..end],
            &mut BTreeMap::new(),
        ))
    }

    /// The values along the match [`matches`](Self::matches) found: at
    /// each expression its first end whose rest is known to match and
    /// whose text reads (every such pair was recorded by the search, so
    /// this walk searches nothing again). A name repeated later in the
    /// template takes the later value.
    fn values(&mut self) -> BTreeMap<String, String> {
        let mut found = BTreeMap::new();
        let (mut index, mut offset) = (0, 0);
        while let Some(part) = self.template.parts.get(index) {
            match part {
                Part::Literal(text) => offset += text.len(),
                Part::Expression(expr) => {
                    let rest = &self.uri[offset..];
                    let limit = UriTemplate::span_limit(expr.operator, rest.as_bytes());
                    let mut read = BTreeMap::new();
                    let end = (0..=limit).find(|&end| {
                        read.clear();
                        rest.is_char_boundary(end)
                            && self.template.may_start(index + 1, &rest[end..])
                            && self.reaches_end(index + 1, offset + end)
                            && UriTemplate::read_expression(expr, &rest[..end], &mut read)
                    });
                    let Some(end) = end else { break };
                    found.append(&mut read);
                    offset += end;
                }
            }
            index += 1;
        }
        found
    }

    /// Whether the parts from `index` on were found to match
    /// `uri[offset..]` (literals followed to the next expression).
    fn reaches_end(&self, mut index: usize, mut offset: usize) -> bool {
        loop {
            let rest = &self.uri[offset..];
            match self.template.parts.get(index) {
                None => return rest.is_empty(),
                Some(Part::Literal(text)) => {
                    if !rest.starts_with(text.as_str()) {
                        return false;
                    }
                    offset += text.len();
                    index += 1;
                }
                Some(Part::Expression(_)) => return self.known_to_match(index, offset),
            }
        }
    }
}

impl fmt::Display for UriTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}

impl std::str::FromStr for UriTemplate {
    type Err = UriTemplateError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        UriTemplate::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: BTreeMap<String, String> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        move |name| map.get(name).cloned()
    }

    fn matched(template: &str, uri: &str) -> Option<Vec<(String, String)>> {
        UriTemplate::parse(template)
            .expect("valid template")
            .match_uri(uri)
            .map(|m| m.into_iter().collect())
    }

    #[test]
    fn expansion_follows_the_rfc_examples() {
        let v = vars(&[
            ("var", "value"),
            ("hello", "Hello World!"),
            ("path", "/foo/bar"),
            ("x", "1024"),
            ("y", "768"),
            ("empty", ""),
        ]);
        let cases = [
            ("{var}", "value"),
            ("{hello}", "Hello%20World%21"),
            ("{+hello}", "Hello%20World!"),
            ("{+path}/here", "/foo/bar/here"),
            ("{#var}", "#value"),
            ("X{.var}", "X.value"),
            ("{/var,x}/here", "/value/1024/here"),
            ("{;x,y,empty}", ";x=1024;y=768;empty"),
            ("{?x,y,empty}", "?x=1024&y=768&empty="),
            ("?fixed=yes{&x}", "?fixed=yes&x=1024"),
            ("{var:3}", "val"),
            ("{x,y}", "1024,768"),
            ("{?undefined}", ""),
        ];
        for (template, expected) in cases {
            let t = UriTemplate::parse(template).expect("valid");
            assert_eq!(t.expand(&v), expected, "{template}");
        }
    }

    #[test]
    fn a_simple_variable_does_not_cross_a_slash() {
        assert_eq!(
            matched("file:///{name}", "file:///notes.txt"),
            Some(vec![("name".into(), "notes.txt".into())])
        );
        assert_eq!(matched("file:///{name}", "file:///a/b.txt"), None);
    }

    #[test]
    fn a_reserved_variable_takes_a_whole_path() {
        assert_eq!(
            matched("file:///{+path}", "file:///a/b/c.txt"),
            Some(vec![("path".into(), "a/b/c.txt".into())])
        );
    }

    #[test]
    fn several_variables_and_literals_match() {
        assert_eq!(
            matched("users://{user}/posts/{post}", "users://ada/posts/42"),
            Some(vec![
                ("post".into(), "42".into()),
                ("user".into(), "ada".into())
            ])
        );
        assert_eq!(
            matched("users://{user}/posts/{post}", "users://ada/comments/42"),
            None
        );
    }

    #[test]
    fn query_parameters_are_optional_and_named() {
        let t = UriTemplate::parse("search://items{?q,limit}").expect("valid");
        let m = t
            .match_uri("search://items?limit=5&q=red%20shoes")
            .expect("matches");
        assert_eq!(m["q"], "red shoes");
        assert_eq!(m["limit"], "5");
        let m = t
            .match_uri("search://items")
            .expect("matches without a query");
        assert!(m.is_empty());
        assert!(t.match_uri("search://items?other=1").is_none());
    }

    #[test]
    fn values_are_percent_decoded() {
        assert_eq!(
            matched("greeting://{name}", "greeting://J%C3%BCrgen"),
            Some(vec![("name".into(), "Jürgen".into())])
        );
    }

    #[test]
    fn expanding_then_matching_gives_the_values_back() {
        let t = UriTemplate::parse("repo://{owner}/{name}/blob{/path*}{?ref}").expect("valid");
        let uri = t.expand(vars(&[
            ("owner", "o"),
            ("name", "n"),
            ("path", "src"),
            ("ref", "main"),
        ]));
        assert_eq!(uri, "repo://o/n/blob/src?ref=main");
        let m = t.match_uri(&uri).expect("matches its own expansion");
        assert_eq!(m["owner"], "o");
        assert_eq!(m["path"], "src");
        assert_eq!(m["ref"], "main");
    }

    /// Found by the `uri_template` fuzz target: every end position of an
    /// expression was read before the rest of the template was tried, so
    /// the work grew with the square of the URI a client sends (4 s for
    /// 40 KiB against `file:///{+path}`; hours for the 4 MiB a body holds).
    #[test]
    fn a_long_uri_is_matched_in_work_linear_in_its_length() {
        let long = "a".repeat(1 << 20);
        let t = UriTemplate::parse("file:///{+path}").expect("valid");
        let uri = format!("file:///{long}");
        let m = Matching::new(&t, &uri, 3 * uri.len())
            .find()
            .expect("matches in 3 steps a byte");
        assert_eq!(m["path"], long);
        assert!(t.match_uri(&format!("{uri}#")).is_none());

        let t = UriTemplate::parse("file:///{name}.txt").expect("valid");
        assert!(t.match_uri(&uri).is_none());
        let name = "a.txt".repeat(1 << 16);
        let uri = format!("file:///{name}.txt");
        let m = Matching::new(&t, &uri, 3 * uri.len())
            .find()
            .expect("matches in 3 steps a byte");
        assert_eq!(m["name"], name);

        // Found by the target on the first fix: a spent budget did not stop
        // the search, and each later end still scanned the rest unpaid.
        let t = UriTemplate::parse("{+a}{#b}%").expect("valid");
        let uri = "3".repeat(1 << 14);
        let steps = MATCH_WORK_PER_BYTE * uri.len();
        let mut matching = Matching::new(&t, &uri, steps);
        assert!(matching.find().is_none());
        assert!(
            matching.scanned <= steps,
            "{} bytes scanned",
            matching.scanned
        );

        // Expressions that can all take the same text: the matcher gives
        // up within its steps (no match) rather than take cubic time.
        let t = UriTemplate::parse("x:{+a}/{+b}/{+c}").expect("valid");
        assert!(
            t.match_uri(&format!("x:{}#", "/".repeat(1 << 16)))
                .is_none()
        );
        assert!(t.match_uri("x:1/2/3").is_some());
    }

    /// Found by the `uri_template` fuzz target: eight adjacent expressions
    /// took half a billion steps to match their own 86-byte expansion,
    /// trying the same split of the rest again and again.
    #[test]
    fn adjacent_expressions_match_their_expansion_trying_each_split_once() {
        let t = UriTemplate::parse("{var}{+hello}{#frag}{.x}{/y}{;z}{?q}{&r}").expect("valid");
        let uri = t.expand(|name| Some(format!("{name}-x.y_z~")));
        let mut matching = Matching::new(&t, &uri, usize::MAX);
        let m = matching.find().expect("matches its expansion");
        assert_eq!(m["q"], "q-x.y_z~");
        let steps = usize::MAX - matching.work;
        assert!(steps < 100_000, "{steps} steps for {} bytes", uri.len());
    }

    /// Found by the `uri_template` fuzz target: below an expression whose
    /// own text did not read, a rest that matched was searched again for
    /// the next end, and again, until thirteen adjacent expressions spent
    /// the step budget on their own 140-byte expansion and reported no
    /// match. Matches are now remembered like failures.
    #[test]
    fn a_rest_that_matched_is_not_searched_again() {
        let t = UriTemplate::parse(
            "{var}{erag}{vx}{/y}{arllo}{#frag}{vx}{/y}{ar}{?q}{rag}{/.x}{/1y}{?q}",
        )
        .expect("valid");
        let names: Vec<String> = t.variables().map(str::to_owned).collect();
        let uri = t.expand(|name| {
            let i = names.iter().position(|n| n == name)?;
            Some(format!("v{i}-x.y_z~"))
        });
        assert!(t.match_uri(&uri).is_some(), "within the budget");
        // The next find: 24 adjacent expressions, within the budget their
        // number buys.
        let many = UriTemplate::parse(
            "{v}{vx}{/y}{arllo}{#frag}{v}x{/y}{#fra}{vx}{/y}{arar}{erag}{vx}{/y}{arllo}{#frag}{v}x{/y}{#fra}{vx}{/y}{ar}{?q}{?q}",
        )
        .expect("valid");
        let names: Vec<String> = many.variables().map(str::to_owned).collect();
        let expansion = many.expand(|name| {
            let i = names.iter().position(|n| n == name)?;
            Some(format!("v{i}-x.y_z~"))
        });
        assert!(many.match_uri(&expansion).is_some(), "{expansion}");
        let mut matching = Matching::new(&t, &uri, usize::MAX);
        // The template is ambiguous (adjacent expressions): any split is
        // a match; a repeated name's values agree here.
        let m = matching.find().expect("matches its expansion");
        assert_eq!(m["q"], "v9-x.y_z~");
        // Each (part, offset) searched once, each paying for the ends it
        // scans and reads: at most about 2 x parts x bytes^2, not the
        // million-step budget it used to exhaust.
        let steps = usize::MAX - matching.work;
        let bound = 2 * t.parts.len() * (uri.len() + 1).pow(2);
        assert!(steps < bound, "{steps} steps for {} bytes", uri.len());
    }

    #[test]
    fn a_repeated_name_takes_its_last_value() {
        assert_eq!(
            matched("{a}/{a}", "1/2"),
            Some(vec![("a".into(), "2".into())])
        );
    }

    #[test]
    fn bad_templates_are_rejected_with_a_reason() {
        for bad in ["file:///{name", "file:///name}", "x{}", "x{a b}", "x{a:0}"] {
            let err = UriTemplate::parse(bad).expect_err(bad);
            assert!(!err.reason.is_empty());
            assert!(err.to_string().contains(bad));
        }
    }
}
