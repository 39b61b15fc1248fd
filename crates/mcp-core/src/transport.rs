//! The `Transport` trait: a duplex of JSON-RPC messages with per-message context.

use std::fmt;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use mcp_types::envelope::Envelope;
use mcp_types::peek::Shape;
use mcp_types::{ClientRequest, DecodeError, ErrorObject, JsonRpcMessage, RequestId};

use crate::error::TransportError;

/// Header-like metadata of a message (HTTP headers, for instance), with
/// case-insensitive names. Cheap to clone: every layer that keeps a
/// request's context (dispatcher, handler context) shares one copy.
///
/// Either owned (built with [`Headers::append`], [`Extend`] or
/// [`FromIterator`]) or a transport's own, shared in place
/// ([`Headers::shared`]): the streamable HTTP server hands each request the
/// header map it parsed instead of copying it, since most requests never
/// read a header.
#[derive(Clone)]
pub struct Headers(Repr);

#[derive(Clone)]
enum Repr {
    Own(Arc<HeaderList>),
    Shared(Arc<dyn HeaderSource>),
}

impl Default for Headers {
    fn default() -> Self {
        Self(Repr::Own(Arc::default()))
    }
}

/// Headers a transport already holds, read where they are
/// ([`Headers::shared`]). Names compare case-insensitively.
pub trait HeaderSource: Send + Sync + std::panic::RefUnwindSafe + 'static {
    /// Every header in order, as a name and a value (a value that is not
    /// text is left out).
    fn pairs(&self) -> Box<dyn Iterator<Item = (&str, &str)> + '_>;

    /// The first value of `name` that is text. The default walks
    /// [`HeaderSource::pairs`]; a source with an index answers from it.
    fn first(&self, name: &str) -> Option<&str> {
        self.pairs()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v)
    }
}

/// Every name and value in one string, each entry its name's end and its
/// value's end in it: owned headers cost two allocations, not two per
/// header.
#[derive(Clone, Default)]
struct HeaderList {
    text: String,
    ends: Vec<(usize, usize)>,
}

impl HeaderList {
    fn push(&mut self, name: &str, value: &str) {
        self.text.push_str(name);
        let name_end = self.text.len();
        self.text.push_str(value);
        self.ends.push((name_end, self.text.len()));
    }

    fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        let mut start = 0;
        self.ends.iter().map(move |&(name_end, end)| {
            let pair = (&self.text[start..name_end], &self.text[name_end..end]);
            start = end;
            pair
        })
    }
}

impl Headers {
    /// No headers.
    pub fn new() -> Self {
        Self::default()
    }

    /// No headers yet, with room for `entries` of `bytes` names and values
    /// together: filled with [`Extend`], they are copied without regrowing.
    pub fn with_capacity(entries: usize, bytes: usize) -> Self {
        Self(Repr::Own(Arc::new(HeaderList {
            text: String::with_capacity(bytes),
            ends: Vec::with_capacity(entries),
        })))
    }

    /// A transport's own headers, read in place: nothing is copied until
    /// a header is added ([`Headers::append`] copies them then).
    pub fn shared(source: Arc<dyn HeaderSource>) -> Self {
        Self(Repr::Shared(source))
    }

    /// The owned list, copied out of a shared source first.
    fn own(&mut self) -> &mut HeaderList {
        if let Repr::Shared(source) = &self.0 {
            let mut list = HeaderList::default();
            for (name, value) in source.pairs() {
                list.push(name, value);
            }
            self.0 = Repr::Own(Arc::new(list));
        }
        match &mut self.0 {
            Repr::Own(list) => Arc::make_mut(list),
            Repr::Shared(_) => unreachable!("made owned above"),
        }
    }

    /// Adds a header (keeping any earlier one of the same name).
    pub fn append(&mut self, name: impl Into<String>, value: impl Into<String>) {
        self.own().push(&name.into(), &value.into());
    }

    /// Adds a header, builder style.
    #[must_use]
    pub fn with(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.append(name, value);
        self
    }

    /// The first value of `name`, compared case-insensitively.
    pub fn get(&self, name: &str) -> Option<&str> {
        match &self.0 {
            Repr::Own(list) => list
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(name))
                .map(|(_, v)| v),
            Repr::Shared(source) => source.first(name),
        }
    }

    /// Every value of `name`, compared case-insensitively.
    pub fn get_all<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.iter()
            .filter(move |(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v)
    }

    /// Every header in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        let (own, shared) = match &self.0 {
            Repr::Own(list) => (Some(list.iter()), None),
            Repr::Shared(source) => (None, Some(source.pairs())),
        };
        own.into_iter()
            .flatten()
            .chain(shared.into_iter().flatten())
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        match &self.0 {
            Repr::Own(list) => list.ends.is_empty(),
            Repr::Shared(source) => source.pairs().next().is_none(),
        }
    }
}

impl fmt::Debug for Headers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

/// Equal when they hold the same headers in the same order, owned or shared.
impl PartialEq for Headers {
    fn eq(&self, other: &Self) -> bool {
        self.iter().eq(other.iter())
    }
}

impl Eq for Headers {}

/// More headers from borrowed names and values, copied into the one string.
impl<'a> Extend<(&'a str, &'a str)> for Headers {
    fn extend<I: IntoIterator<Item = (&'a str, &'a str)>>(&mut self, pairs: I) {
        let list = self.own();
        for (name, value) in pairs {
            list.push(name, value);
        }
    }
}

/// Headers from borrowed names and values, copied once into one string.
impl<'a> FromIterator<(&'a str, &'a str)> for Headers {
    fn from_iter<I: IntoIterator<Item = (&'a str, &'a str)>>(pairs: I) -> Self {
        let pairs = pairs.into_iter();
        // At most this many (a filtered header map knows its length).
        let count = match pairs.size_hint() {
            (_, Some(upper)) => upper,
            (lower, None) => lower,
        };
        let mut list = HeaderList {
            // A guess at a header's name and value together, so a usual
            // request's headers fill the string without regrowing it.
            text: String::with_capacity(count * 40),
            ends: Vec::with_capacity(count),
        };
        for (name, value) in pairs {
            list.push(name, value);
        }
        Self(Repr::Own(Arc::new(list)))
    }
}

/// What a handler may ask of the stream its request arrived on.
pub trait StreamControl: Send + Sync + fmt::Debug + 'static {
    /// Closes the connection carrying this request's stream while the request
    /// goes on (SSE polling): the client reconnects with `Last-Event-ID` and
    /// gets what was sent meanwhile. A no-op where streams do not apply.
    fn close_stream(&self);

    /// The request `id` on this stream was cancelled and gets no answer:
    /// what waits on the stream for that answer (an HTTP POST's SSE stream
    /// or JSON body) can end. [`Dispatcher::receive`](crate::Dispatcher::receive)
    /// calls it; a request started with [`Dispatcher::call`](crate::Dispatcher::call)
    /// ends in [`Answered::Cancelled`](crate::Answered::Cancelled) instead.
    /// The default does nothing (where a stream waits on no answer).
    fn unanswered(&self, id: &RequestId) {
        let _ = id;
    }
}

/// What a transport knows about an inbound message beyond its JSON.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct TransportContext {
    /// Headers that came with the message (HTTP), empty on stdio.
    pub headers: Headers,
    /// The transport session the message belongs to, if any.
    pub session_id: Option<Arc<str>>,
    /// Control over the message's stream, on transports that have streams.
    pub stream: Option<Arc<dyn StreamControl>>,
    /// Who sent the message, when an authentication layer in front of the
    /// transport verified it (the streamable HTTP server fills it from the
    /// bearer token's issuer, subject and client); `None` when unknown.
    /// An identity, never a credential.
    pub principal: Option<Arc<str>>,
    /// The address the message came from, where the transport knows it (the
    /// streamable HTTP server fills it from the accepted socket, or from
    /// what a proxy in front reported); `None` on stdio and in memory. The
    /// rate limit keys on it when there is neither principal nor session.
    pub peer_addr: Option<SocketAddr>,
    /// For a request: its era, read once by the transport it arrived on
    /// ([`mcp_types::envelope::read`], or [`mcp_types::envelope::read_parsed`]
    /// from [`TransportContext::parsed`]), or the refusal to answer it with;
    /// `None` from a transport that does not read it.
    pub envelope: Option<Result<Envelope, ErrorObject>>,
    /// For a request: its params already parsed into their type by the
    /// transport that read its envelope from them (the streamable HTTP
    /// server, for a stateless request), for the handler to take instead of
    /// parsing them again; `None` elsewhere.
    pub parsed: Option<Arc<ClientRequest>>,
    /// For a request the peer sent while answering one of ours, where the
    /// transport knows which: that request of ours (the streamable HTTP
    /// client fills it for what arrives on the SSE stream of its POST).
    /// `None` elsewhere (stdio carries no such link).
    pub related_request: Option<RequestId>,
}

impl TransportContext {
    /// A context with these headers.
    pub fn with_headers(headers: Headers) -> Self {
        Self {
            headers,
            session_id: None,
            stream: None,
            principal: None,
            peer_addr: None,
            envelope: None,
            parsed: None,
            related_request: None,
        }
    }

    /// The context of `message` on a transport with no headers (stdio,
    /// memory): a request's envelope read from its `_meta`.
    pub fn of_message(message: &JsonRpcMessage) -> Self {
        let mut context = Self::default();
        if let JsonRpcMessage::Request(request) = message {
            context.envelope = Some(mcp_types::envelope::read(
                &request.method,
                request.params.as_ref(),
                None,
            ));
        }
        context
    }
}

/// What a transport hands the dispatcher.
#[derive(Debug)]
#[non_exhaustive]
pub enum Inbound {
    /// A well-formed message with its context.
    Message(JsonRpcMessage, TransportContext),
    /// A frame that is not a JSON-RPC message, with the id and shape its
    /// first bytes show ([`DecodeError::with_envelope_of`]). The dispatcher
    /// answers a request with `-32700`/`-32600`, fails the request of ours
    /// that a response answers, and keeps the connection.
    Malformed(DecodeError),
    /// A frame larger than the transport's limit, dropped unread. Handled
    /// like [`Inbound::Malformed`], by what its first bytes show.
    TooLarge {
        /// The limit in bytes.
        limit: usize,
        /// The message's id when the first bytes of the frame held it
        /// (see [`mcp_types::peek::peek`]), so the refusal reaches its
        /// caller, or the request it answers is failed.
        id: Option<RequestId>,
        /// What the first bytes showed the message to be.
        shape: Shape,
    },
    /// Something went wrong at the transport outside any one request (a
    /// notification that could not be delivered, a standalone stream that
    /// broke): nobody waits for it, so it goes to the handler's
    /// [`crate::Handler::on_fault`].
    Fault(TransportError),
    /// The peer is gone (an HTTP session ended by `DELETE`, expiry or
    /// shutdown): requests still running are cancelled at once. The end of
    /// input (`recv` answering `None`) means only that the peer finished
    /// sending, and running requests may still finish and be answered.
    Closed,
    /// A request this side sent could not be carried to the peer or its
    /// answer could not be read back (HTTP: the POST failed, or its response
    /// broke off). The dispatcher fails that request's caller with
    /// [`crate::Error::Transport`]; nothing is synthesized as if the peer had
    /// answered.
    RequestFailed {
        /// The id of the request that failed.
        id: RequestId,
        /// What went wrong at the transport.
        error: TransportError,
    },
}

/// A message to send, with routing hints for transports that use them.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Outbound {
    /// The message.
    pub message: JsonRpcMessage,
    /// The inbound request this message belongs to (a response, or a request
    /// or notification sent while serving it), so an HTTP transport can put
    /// it on that request's stream.
    pub related_request: Option<RequestId>,
    /// Extra headers for transports that carry them.
    pub headers: Headers,
}

impl Outbound {
    /// A message with no routing hints.
    pub fn new(message: JsonRpcMessage) -> Self {
        Self {
            message,
            related_request: None,
            headers: Headers::new(),
        }
    }
}

/// Sends messages to the peer.
pub trait TransportSender: Send + 'static {
    /// Sends one message. A transport may buffer it until [`flush`](Self::flush).
    fn send(
        &mut self,
        message: Outbound,
    ) -> impl Future<Output = Result<(), TransportError>> + Send;
    /// Pushes buffered messages out. The dispatcher calls it whenever its
    /// queue runs empty, so a burst of messages costs one write.
    fn flush(&mut self) -> impl Future<Output = Result<(), TransportError>> + Send {
        async { Ok(()) }
    }
    /// Closes the sending side (on stdio: closes the pipe).
    fn close(&mut self) -> impl Future<Output = ()> + Send;
}

/// Receives messages from the peer.
pub trait TransportReceiver: Send + 'static {
    /// The next inbound item, `None` once the peer is gone.
    fn recv(&mut self) -> impl Future<Output = Option<Inbound>> + Send;
}

/// A duplex of JSON-RPC messages: stdio, an HTTP session, or memory.
pub trait Transport: Send + 'static {
    /// The sending half.
    type Sender: TransportSender;
    /// The receiving half.
    type Receiver: TransportReceiver;
    /// Splits the transport so reading and writing proceed independently.
    fn split(self) -> (Self::Sender, Self::Receiver);
    /// The `network.transport` of the semantic conventions, for spans:
    /// `pipe` for stdio, `tcp` for HTTP; `None` (the default) for memory.
    fn network_transport(&self) -> Option<&'static str> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::Headers;

    #[test]
    fn headers_keep_order_and_find_names_case_insensitively() {
        let mut headers: Headers = [("Accept", "a"), ("mcp-session-id", "s"), ("accept", "b")]
            .into_iter()
            .collect();
        headers.append("X-Empty", "");
        assert_eq!(headers.get("ACCEPT"), Some("a"));
        assert_eq!(headers.get_all("accept").collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(headers.get("x-empty"), Some(""));
        assert_eq!(headers.get("missing"), None);
        let all: Vec<_> = headers.iter().collect();
        assert_eq!(
            all,
            [
                ("Accept", "a"),
                ("mcp-session-id", "s"),
                ("accept", "b"),
                ("X-Empty", "")
            ]
        );
        assert!(!headers.is_empty());
        assert!(Headers::new().is_empty());
        assert_eq!(
            Headers::new().with("a", "1"),
            [("a", "1")].into_iter().collect()
        );
        let mut sized = Headers::with_capacity(2, 4);
        assert!(sized.is_empty());
        sized.extend([("a", "1"), ("b", "2")]);
        sized.extend([("c", "3")]);
        assert_eq!(
            sized.iter().collect::<Vec<_>>(),
            [("a", "1"), ("b", "2"), ("c", "3")]
        );
    }

    /// A transport's own headers: a list of pairs, read in place.
    struct Pairs(Vec<(&'static str, &'static str)>);

    impl super::HeaderSource for Pairs {
        fn pairs(&self) -> Box<dyn Iterator<Item = (&str, &str)> + '_> {
            Box::new(self.0.iter().copied())
        }
    }

    #[test]
    fn shared_headers_read_in_place_and_are_copied_only_when_added_to() {
        let source = std::sync::Arc::new(Pairs(vec![("accept", "a"), ("Accept", "b")]));
        let shared = Headers::shared(source.clone());
        assert_eq!(shared.get("ACCEPT"), Some("a"));
        assert_eq!(shared.get_all("accept").collect::<Vec<_>>(), ["a", "b"]);
        assert!(!shared.is_empty());
        assert!(Headers::shared(std::sync::Arc::new(Pairs(Vec::new()))).is_empty());
        let owned: Headers = [("accept", "a"), ("Accept", "b")].into_iter().collect();
        assert_eq!(
            shared, owned,
            "the same headers, shared or owned, are equal"
        );
        assert_eq!(format!("{shared:?}"), format!("{owned:?}"));

        // Adding copies them out; the source is untouched and no longer held.
        let added = shared.clone().with("x-more", "1");
        assert_eq!(
            added.iter().collect::<Vec<_>>(),
            [("accept", "a"), ("Accept", "b"), ("x-more", "1")]
        );
        assert_eq!(shared.iter().count(), 2);
        drop(shared);
        assert_eq!(std::sync::Arc::strong_count(&source), 1);
    }
}
