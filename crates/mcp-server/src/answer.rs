//! What resource and prompt handlers may return, and what they are given.

use std::collections::BTreeMap;

use mcp_types::ResultOrInputRequired;
use mcp_types::{
    BlobResourceContents, GetPromptResult, PromptMessage, ResourceContents, Role,
    TextResourceContents,
};
use schemars::JsonSchema;

use crate::tool_io::InputRequired;

/// What a resource handler is asked to read.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ResourceRequest {
    /// The URI the client asked for.
    pub uri: String,
    /// For a resource template, the variables matched out of the URI.
    pub variables: BTreeMap<String, String>,
}

/// Arguments of a prompt that takes none.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Deserialize, JsonSchema)]
pub struct NoArguments {}

/// Binary resource contents, sent base64-encoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blob(pub Vec<u8>);

/// Converts what a resource handler returns into resource contents.
///
/// A `String` becomes text contents with the resource's URI and MIME type, a
/// [`Blob`] becomes base64 blob contents; ready `ResourceContents` pass as they are.
pub trait IntoResourceContents {
    /// The contents, given the URI read and the registered MIME type.
    fn into_contents(self, uri: &str, mime_type: Option<&str>) -> Vec<ResourceContents>;
}

impl IntoResourceContents for String {
    fn into_contents(self, uri: &str, mime_type: Option<&str>) -> Vec<ResourceContents> {
        let mut contents = TextResourceContents::new(uri, self);
        contents.mime_type = mime_type.map(str::to_owned);
        vec![contents.into()]
    }
}

impl IntoResourceContents for &'static str {
    fn into_contents(self, uri: &str, mime_type: Option<&str>) -> Vec<ResourceContents> {
        self.to_owned().into_contents(uri, mime_type)
    }
}

impl IntoResourceContents for Blob {
    fn into_contents(self, uri: &str, mime_type: Option<&str>) -> Vec<ResourceContents> {
        use base64::Engine as _;
        let encoded = base64::engine::general_purpose::STANDARD.encode(self.0);
        let mut contents = BlobResourceContents::new(uri, encoded);
        contents.mime_type = mime_type.map(str::to_owned);
        vec![contents.into()]
    }
}

impl IntoResourceContents for ResourceContents {
    fn into_contents(self, _: &str, _: Option<&str>) -> Vec<ResourceContents> {
        vec![self]
    }
}

impl IntoResourceContents for Vec<ResourceContents> {
    fn into_contents(self, _: &str, _: Option<&str>) -> Vec<ResourceContents> {
        self
    }
}

/// Converts what a prompt handler returns into a `GetPromptResult` (or,
/// at 2026-07-28, a request for input first).
///
/// A `String` becomes one user message; a `PromptMessage` or a list of
/// them becomes the result's messages.
pub trait IntoPromptResult {
    /// The answer.
    fn into_prompt_answer(self) -> ResultOrInputRequired<GetPromptResult>;
}

impl IntoPromptResult for GetPromptResult {
    fn into_prompt_answer(self) -> ResultOrInputRequired<GetPromptResult> {
        ResultOrInputRequired::Complete(self)
    }
}

impl IntoPromptResult for Vec<PromptMessage> {
    fn into_prompt_answer(self) -> ResultOrInputRequired<GetPromptResult> {
        GetPromptResult::new(self).into_prompt_answer()
    }
}

impl IntoPromptResult for PromptMessage {
    fn into_prompt_answer(self) -> ResultOrInputRequired<GetPromptResult> {
        GetPromptResult::new(vec![self]).into_prompt_answer()
    }
}

impl IntoPromptResult for String {
    fn into_prompt_answer(self) -> ResultOrInputRequired<GetPromptResult> {
        PromptMessage::new(Role::User, mcp_types::ContentBlock::text(self)).into_prompt_answer()
    }
}

impl IntoPromptResult for InputRequired {
    fn into_prompt_answer(self) -> ResultOrInputRequired<GetPromptResult> {
        ResultOrInputRequired::InputRequired(self.into_result())
    }
}

impl<T: IntoPromptResult> IntoPromptResult for crate::Answer<T> {
    fn into_prompt_answer(self) -> ResultOrInputRequired<GetPromptResult> {
        match self {
            crate::Answer::Complete(value) => value.into_prompt_answer(),
            crate::Answer::InputRequired(input) => input.into_prompt_answer(),
        }
    }
}
