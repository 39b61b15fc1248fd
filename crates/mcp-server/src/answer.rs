//! What resource, prompt and completion handlers may return, and what a
//! resource handler is given.

use std::collections::BTreeMap;

use mcp_types::ResultOrInputRequired;
use mcp_types::{
    BlobResourceContents, Completion, GetPromptResult, PromptMessage, ResourceContents, Role,
    TextResourceContents,
};

use serde::de::value::MapDeserializer;
use serde::de::{self, DeserializeOwned, IntoDeserializer, Unexpected, Visitor};

use crate::handler_error::{CompletionError, PromptError, ResourceError};
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

/// Binary resource contents, sent base64-encoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blob(pub Vec<u8>);

/// Converts what a resource handler returns into resource contents.
///
/// A `String` or `&'static str` becomes text contents with the resource's
/// URI and MIME type, a [`Blob`] base64 blob contents; ready
/// `ResourceContents` pass as they are; a `Result` of those with any error
/// that converts into a [`ResourceError`] (so `?` works on any error).
pub trait IntoResourceResult {
    /// The contents, given the URI read and the registered MIME type.
    ///
    /// # Errors
    /// The handler's failure.
    fn into_resource_contents(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<Vec<ResourceContents>, ResourceError>;
}

impl IntoResourceResult for String {
    fn into_resource_contents(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<Vec<ResourceContents>, ResourceError> {
        let mut contents = TextResourceContents::new(uri, self);
        contents.mime_type = mime_type.map(str::to_owned);
        Ok(vec![contents.into()])
    }
}

impl IntoResourceResult for &'static str {
    fn into_resource_contents(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<Vec<ResourceContents>, ResourceError> {
        self.to_owned().into_resource_contents(uri, mime_type)
    }
}

impl IntoResourceResult for Blob {
    fn into_resource_contents(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<Vec<ResourceContents>, ResourceError> {
        use base64::Engine as _;
        let encoded = base64::engine::general_purpose::STANDARD.encode(self.0);
        let mut contents = BlobResourceContents::new(uri, encoded);
        contents.mime_type = mime_type.map(str::to_owned);
        Ok(vec![contents.into()])
    }
}

impl IntoResourceResult for ResourceContents {
    fn into_resource_contents(
        self,
        _: &str,
        _: Option<&str>,
    ) -> Result<Vec<ResourceContents>, ResourceError> {
        Ok(vec![self])
    }
}

impl IntoResourceResult for Vec<ResourceContents> {
    fn into_resource_contents(
        self,
        _: &str,
        _: Option<&str>,
    ) -> Result<Vec<ResourceContents>, ResourceError> {
        Ok(self)
    }
}

impl<T: IntoResourceResult, E: Into<ResourceError>> IntoResourceResult for Result<T, E> {
    fn into_resource_contents(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<Vec<ResourceContents>, ResourceError> {
        self.map_err(Into::into)?
            .into_resource_contents(uri, mime_type)
    }
}

/// Converts what a prompt handler returns into a `GetPromptResult` (or,
/// at 2026-07-28, a request for input first).
///
/// A `String` becomes one user message; a `PromptMessage` or a list of
/// them becomes the result's messages; an [`InputRequired`] or
/// [`Answer`](crate::Answer) asks first; a `Result` of those with any error
/// that converts into a [`PromptError`] (so `?` works on any error).
pub trait IntoPromptResult {
    /// The answer.
    ///
    /// # Errors
    /// The handler's failure.
    fn into_prompt_answer(self) -> Result<ResultOrInputRequired<GetPromptResult>, PromptError>;
}

impl IntoPromptResult for GetPromptResult {
    fn into_prompt_answer(self) -> Result<ResultOrInputRequired<GetPromptResult>, PromptError> {
        Ok(ResultOrInputRequired::Complete(self))
    }
}

impl IntoPromptResult for Vec<PromptMessage> {
    fn into_prompt_answer(self) -> Result<ResultOrInputRequired<GetPromptResult>, PromptError> {
        GetPromptResult::new(self).into_prompt_answer()
    }
}

impl IntoPromptResult for PromptMessage {
    fn into_prompt_answer(self) -> Result<ResultOrInputRequired<GetPromptResult>, PromptError> {
        GetPromptResult::new(vec![self]).into_prompt_answer()
    }
}

impl IntoPromptResult for String {
    fn into_prompt_answer(self) -> Result<ResultOrInputRequired<GetPromptResult>, PromptError> {
        PromptMessage::new(Role::User, mcp_types::ContentBlock::text(self)).into_prompt_answer()
    }
}

impl IntoPromptResult for &'static str {
    fn into_prompt_answer(self) -> Result<ResultOrInputRequired<GetPromptResult>, PromptError> {
        self.to_owned().into_prompt_answer()
    }
}

impl IntoPromptResult for InputRequired {
    fn into_prompt_answer(self) -> Result<ResultOrInputRequired<GetPromptResult>, PromptError> {
        Ok(ResultOrInputRequired::InputRequired(self.into_result()))
    }
}

impl<T: IntoPromptResult> IntoPromptResult for crate::Answer<T> {
    fn into_prompt_answer(self) -> Result<ResultOrInputRequired<GetPromptResult>, PromptError> {
        match self {
            crate::Answer::Complete(value) => value.into_prompt_answer(),
            crate::Answer::InputRequired(input) => input.into_prompt_answer(),
        }
    }
}

impl<T: IntoPromptResult, E: Into<PromptError>> IntoPromptResult for Result<T, E> {
    fn into_prompt_answer(self) -> Result<ResultOrInputRequired<GetPromptResult>, PromptError> {
        self.map_err(Into::into)?.into_prompt_answer()
    }
}

/// Converts what a completion handler returns into the suggestions.
///
/// A `Completion` as it is, a `Vec<String>` as the values (no total, no
/// more), a `Result` of those with any error that converts into a
/// [`CompletionError`] (so `?` works on any error).
pub trait IntoCompletionResult {
    /// The suggestions.
    ///
    /// # Errors
    /// The handler's failure.
    fn into_completion(self) -> Result<Completion, CompletionError>;
}

impl IntoCompletionResult for Completion {
    fn into_completion(self) -> Result<Completion, CompletionError> {
        Ok(self)
    }
}

impl IntoCompletionResult for Vec<String> {
    fn into_completion(self) -> Result<Completion, CompletionError> {
        Ok(Completion::new(self))
    }
}

impl<T: IntoCompletionResult, E: Into<CompletionError>> IntoCompletionResult for Result<T, E> {
    fn into_completion(self) -> Result<Completion, CompletionError> {
        self.map_err(Into::into)?.into_completion()
    }
}

impl ResourceRequest {
    /// The template variables read into `T`, a struct with a field per
    /// variable: strings as they are, numbers and booleans parsed from their
    /// text, `Option` fields for variables that may be absent.
    ///
    /// The [`Variables`](crate::Variables) extractor reads them so for a
    /// handler.
    ///
    /// # Examples
    /// ```
    /// use mcp_server::{ResourceError, ResourceRequest};
    ///
    /// #[derive(serde::Deserialize)]
    /// struct Profile { id: u64 }
    ///
    /// fn profile_id(request: &ResourceRequest) -> Result<u64, ResourceError> {
    ///     Ok(request.variables_as::<Profile>()?.id)
    /// }
    /// ```
    ///
    /// # Errors
    /// A [`ResourceError`] (answered as `-32602`) naming the variable that
    /// does not fit.
    pub fn variables_as<T: DeserializeOwned>(&self) -> Result<T, ResourceError> {
        read_texts(&self.variables).map_err(|e| {
            ResourceError::invalid_params(format!(
                "template variable `{}` of `{}`: {}",
                e.path(),
                self.uri,
                e.inner()
            ))
        })
    }
}

/// Reads texts by name (a template's variables, a prompt's arguments) into
/// `T`: strings as they are, numbers and booleans parsed from their text,
/// `Option` fields for names that may be absent.
///
/// # Errors
/// The first value that does not fit, with its path.
pub(crate) fn read_texts<T: DeserializeOwned>(
    texts: &BTreeMap<String, String>,
) -> Result<T, serde_path_to_error::Error<de::value::Error>> {
    let map = MapDeserializer::new(
        texts
            .iter()
            .map(|(name, value)| (name.as_str(), TemplateValue(value.as_str()))),
    );
    serde_path_to_error::deserialize(map)
}

/// One text value, read as whatever the field asks for.
struct TemplateValue<'a>(&'a str);

impl<'de> IntoDeserializer<'de, de::value::Error> for TemplateValue<'de> {
    type Deserializer = Self;
    fn into_deserializer(self) -> Self {
        self
    }
}

macro_rules! parse_as {
    ($($method:ident => $visit:ident),* $(,)?) => {
        $(
            fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
                match self.0.parse() {
                    Ok(value) => visitor.$visit(value),
                    Err(_) => Err(de::Error::invalid_value(Unexpected::Str(self.0), &visitor)),
                }
            }
        )*
    };
}

impl<'de> de::Deserializer<'de> for TemplateValue<'de> {
    type Error = de::value::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        visitor.visit_borrowed_str(self.0)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        visitor.visit_some(self)
    }

    parse_as! {
        deserialize_bool => visit_bool,
        deserialize_i8 => visit_i8, deserialize_i16 => visit_i16,
        deserialize_i32 => visit_i32, deserialize_i64 => visit_i64,
        deserialize_u8 => visit_u8, deserialize_u16 => visit_u16,
        deserialize_u32 => visit_u32, deserialize_u64 => visit_u64,
        deserialize_f32 => visit_f32, deserialize_f64 => visit_f64,
    }

    serde::forward_to_deserialize_any! {
        i128 u128 char str string bytes byte_buf unit unit_struct newtype_struct seq
        tuple tuple_struct map struct enum identifier ignored_any
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize, PartialEq)]
    struct Vars {
        id: u64,
        name: String,
        active: Option<bool>,
    }

    fn request(variables: &[(&str, &str)]) -> ResourceRequest {
        ResourceRequest {
            uri: "users://x".into(),
            variables: variables
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
        }
    }

    #[test]
    fn template_variables_read_into_a_struct() {
        let vars: Vars = request(&[("id", "7"), ("name", "ada"), ("active", "true")])
            .variables_as()
            .expect("read");
        assert_eq!(
            vars,
            Vars {
                id: 7,
                name: "ada".into(),
                active: Some(true)
            }
        );
        let absent: Vars = request(&[("id", "7"), ("name", "ada")])
            .variables_as()
            .expect("read");
        assert_eq!(absent.active, None);
    }

    #[test]
    fn a_variable_that_does_not_fit_is_invalid_params_naming_it() {
        let error = request(&[("id", "seven"), ("name", "ada")])
            .variables_as::<Vars>()
            .expect_err("not a number");
        let error = error.as_error_object();
        assert_eq!(error.code, mcp_types::ErrorCode::INVALID_PARAMS);
        assert!(error.message.contains("`id`"), "{}", error.message);
    }

    #[test]
    fn a_failed_result_is_the_handlers_error() {
        let failed: Result<String, std::io::Error> = Err(std::io::Error::other("disk on fire"));
        let error = failed
            .into_resource_contents("notes://x", None)
            .expect_err("failed");
        assert_eq!(
            error.as_error_object().code,
            mcp_types::ErrorCode::INTERNAL_ERROR
        );
        assert_eq!(error.message(), "disk on fire");
        let prompt: Result<String, PromptError> = Err(PromptError::invalid_params("no"));
        let error = prompt.into_prompt_answer().expect_err("failed");
        assert_eq!(
            error.as_error_object().code,
            mcp_types::ErrorCode::INVALID_PARAMS
        );
    }
}
