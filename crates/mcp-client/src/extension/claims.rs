//! Result claims: the `tools/call` result shapes extensions add, told apart
//! by their `resultType`, and the parsed values they yield.

use std::any::Any;
use std::collections::HashMap;

use mcp_types::extension::ExtensionId;
use mcp_types::{CallToolResult, RawJson, Revision};
use serde::de::DeserializeOwned;

use super::error::ExtensionConfigError;

/// The `resultType` values of the core protocol, which no claim may take.
const CORE_RESULT_TYPES: [&str; 2] = ["complete", "input_required"];

/// A result shape an extension adds to `tools/call`, told apart by its
/// `resultType`. See the [module documentation](crate::extension).
pub trait ResultClaim: DeserializeOwned + Send + Sync + 'static {
    /// The extension's identifier (`io.modelcontextprotocol/tasks`).
    const EXTENSION: &'static str;
    /// The `resultType` that marks this shape (`task`); never `complete`
    /// or `input_required`.
    const RESULT_TYPE: &'static str;
    /// The first protocol revision at which the claim is active.
    const SINCE: Revision;
}

type ParseFn = fn(&RawJson) -> Result<Box<dyn Any + Send + Sync>, serde_json::Error>;

/// One registered claim, type-erased.
#[derive(Clone)]
pub(crate) struct Claim {
    pub(crate) extension: &'static str,
    pub(crate) result_type: &'static str,
    pub(crate) since: Revision,
    parse: ParseFn,
}

impl Claim {
    /// The claim of `T` (one this crate implements, so known valid).
    pub(crate) fn of<T: ResultClaim>() -> Self {
        Self {
            extension: T::EXTENSION,
            result_type: T::RESULT_TYPE,
            since: T::SINCE,
            parse: parse_claim::<T>,
        }
    }
}

fn parse_claim<T: ResultClaim>(
    raw: &RawJson,
) -> Result<Box<dyn Any + Send + Sync>, serde_json::Error> {
    raw.parse::<T>()
        .map(|v| Box::new(v) as Box<dyn Any + Send + Sync>)
}

/// A claimed `tools/call` result, parsed into its claim's type.
pub struct ClaimedResult {
    extension: &'static str,
    result_type: &'static str,
    value: Box<dyn Any + Send + Sync>,
}

impl std::fmt::Debug for ClaimedResult {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClaimedResult")
            .field("extension", &self.extension)
            .field("result_type", &self.result_type)
            .finish_non_exhaustive()
    }
}

impl ClaimedResult {
    /// The identifier of the extension that claimed the result.
    pub fn extension(&self) -> &'static str {
        self.extension
    }

    /// The result's `resultType`.
    pub fn result_type(&self) -> &'static str {
        self.result_type
    }

    /// Whether the result is of claim type `T`.
    pub fn is<T: ResultClaim>(&self) -> bool {
        self.value.is::<T>()
    }

    /// The typed value, or `self` back when it is of another claim's type.
    ///
    /// # Errors
    /// `self`, unchanged, when the value is not a `T`.
    pub fn downcast<T: ResultClaim>(self) -> Result<T, Self> {
        match self.value.downcast::<T>() {
            Ok(value) => Ok(*value),
            Err(value) => Err(Self { value, ..self }),
        }
    }

    /// A reference to the typed value, if it is a `T`.
    pub fn downcast_ref<T: ResultClaim>(&self) -> Option<&T> {
        self.value.downcast_ref::<T>()
    }
}

/// What `tools/call` answered, claimed results included.
#[derive(Debug)]
#[non_exhaustive]
// Returned once per call, never stored in bulk: boxing would only add an allocation.
#[allow(clippy::large_enum_variant)]
pub enum ToolOutcome {
    /// The tool's result.
    Complete(CallToolResult),
    /// A result of an extension's own shape.
    Claimed(ClaimedResult),
}

/// The claims of a config, indexed by `resultType`.
#[derive(Clone, Default)]
pub(crate) struct Claims {
    by_type: HashMap<&'static str, Claim>,
}

impl Claims {
    pub(crate) fn add<T: ResultClaim>(&mut self) -> Result<(), ExtensionConfigError> {
        ExtensionId::new(T::EXTENSION)?;
        if CORE_RESULT_TYPES.contains(&T::RESULT_TYPE) {
            return Err(ExtensionConfigError::CoreResultType {
                extension: T::EXTENSION,
                result_type: T::RESULT_TYPE,
            });
        }
        if self.by_type.contains_key(T::RESULT_TYPE) {
            return Err(ExtensionConfigError::DuplicateClaim {
                result_type: T::RESULT_TYPE,
            });
        }
        self.by_type.insert(T::RESULT_TYPE, Claim::of::<T>());
        Ok(())
    }

    /// Whether `extension` bears claims, none of them active at `revision`.
    pub(crate) fn all_inactive(&self, extension: &str, revision: Revision) -> bool {
        let mut of_extension = self
            .by_type
            .values()
            .filter(|c| c.extension == extension)
            .peekable();
        of_extension.peek().is_some() && of_extension.all(|c| c.since > revision)
    }

    /// The extensions bearing claims.
    pub(crate) fn extensions(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.by_type.values().map(|c| c.extension)
    }

    /// The claimed result `raw` is, if an active claim takes its
    /// `resultType`: one of these, else `also` (the claim of an extension
    /// the request declared for itself), the tag read once.
    ///
    /// # Errors
    /// What serde found wrong when it is claimed but does not fit the
    /// claim's type.
    pub(crate) fn claimed(
        &self,
        raw: &RawJson,
        revision: Revision,
        also: Option<&Claim>,
    ) -> Result<Option<ClaimedResult>, serde_json::Error> {
        if self.by_type.is_empty() && also.is_none() {
            return Ok(None);
        }
        #[derive(serde::Deserialize)]
        struct Tag {
            #[serde(rename = "resultType")]
            result_type: Option<String>,
        }
        let Some(tag) = raw.parse::<Tag>().ok().and_then(|t| t.result_type) else {
            return Ok(None);
        };
        let Some(claim) = self
            .by_type
            .get(tag.as_str())
            .or(also.filter(|c| c.result_type == tag))
            .filter(|c| c.since <= revision)
        else {
            return Ok(None);
        };
        let value = (claim.parse)(raw)?;
        Ok(Some(ClaimedResult {
            extension: claim.extension,
            result_type: claim.result_type,
            value,
        }))
    }
}
