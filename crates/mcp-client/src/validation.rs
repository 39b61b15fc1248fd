//! Tool results checked against the output schema the tool declared
//! (feature `output-validation`, on by default). Without the feature
//! nothing is compiled in and nothing is checked.

#[cfg(feature = "output-validation")]
use std::collections::HashMap;
#[cfg(feature = "output-validation")]
use std::sync::Arc;

#[cfg(feature = "output-validation")]
use mcp_types::untrusted::Escaped;
use mcp_types::{CallToolResult, Tool};

use crate::error::Error;

/// Each listed tool's compiled output schema (`None`: the tool declares none).
#[derive(Default)]
pub(crate) struct OutputSchemas {
    #[cfg(feature = "output-validation")]
    validators: HashMap<String, Option<Arc<jsonschema::Validator>>>,
}

/// Validators compiled outside the session lock, ready to be kept.
pub(crate) struct Compiled {
    #[cfg(feature = "output-validation")]
    validators: Vec<(String, Option<Arc<jsonschema::Validator>>)>,
}

impl OutputSchemas {
    /// Compiles the output schemas of `tools` (a schema that does not
    /// compile is ignored with a warning: the tool's results go unchecked).
    #[cfg_attr(not(feature = "output-validation"), allow(unused_variables))]
    pub(crate) fn compile(tools: &[Tool]) -> Compiled {
        #[cfg(feature = "output-validation")]
        {
            let validators = tools
                .iter()
                .map(|tool| {
                    let validator = tool.output_schema.as_ref().and_then(|schema| {
                        match jsonschema::validator_for(&serde_json::Value::Object(schema.clone()))
                        {
                            Ok(v) => Some(Arc::new(v)),
                            Err(e) => {
                                tracing::warn!(
                                    tool = %Escaped::name(&tool.name),
                                    error = %Escaped::one_line(&e.to_string()), "ignoring an output schema that does not compile");
                                None
                            }
                        }
                    });
                    (tool.name.clone(), validator)
                })
                .collect();
            Compiled { validators }
        }
        #[cfg(not(feature = "output-validation"))]
        Compiled {}
    }

    /// Keeps what [`compile`](Self::compile) made.
    #[cfg_attr(not(feature = "output-validation"), allow(unused_variables))]
    pub(crate) fn learn(&mut self, compiled: Compiled) {
        #[cfg(feature = "output-validation")]
        self.validators.extend(compiled.validators);
    }

    /// Forgets every schema (the tool list changed).
    pub(crate) fn clear(&mut self) {
        #[cfg(feature = "output-validation")]
        self.validators.clear();
    }

    /// Checks `result` of tool `name` against its schema. A tool this
    /// session has not listed is not checked: no extra `tools/list` is sent
    /// behind the caller's back.
    ///
    /// # Errors
    /// [`Error::InvalidToolResult`] when the tool declares an output schema
    /// and the structured content is missing or does not match it.
    #[cfg_attr(not(feature = "output-validation"), allow(unused_variables))]
    pub(crate) fn validate(&self, name: &str, result: &CallToolResult) -> Result<(), Error> {
        #[cfg(feature = "output-validation")]
        {
            let Some(Some(validator)) = self.validators.get(name) else {
                return Ok(());
            };
            let Some(structured) = &result.structured_content else {
                return Err(Error::InvalidToolResult {
                    tool: name.to_owned(),
                    reason: "the tool declares an output schema but returned no structured content"
                        .into(),
                });
            };
            validator
                .validate(structured)
                .map_err(|e| Error::InvalidToolResult {
                    tool: name.to_owned(),
                    reason: e.to_string(),
                })
        }
        #[cfg(not(feature = "output-validation"))]
        Ok(())
    }
}
