//! Elicitation: a server asks the user for input through the client, with a
//! form (a flat schema of primitive fields) or a URL (`elicitation/create`;
//! an input request in 2026-07-28).

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::common::JsonObject;
use crate::dispatch;
use crate::meta::{RequestMeta, ResultMeta};
use crate::result::ResultType;
use crate::tag::{
    ArrayTypeTag, BooleanTypeTag, FormModeTag, ObjectTypeTag, StringTypeTag, UrlModeTag,
};
use crate::task::TaskMetadata;

/// The `format` of a [`StringSchema`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum StringFormat {
    /// An email address.
    Email,
    /// A URI.
    Uri,
    /// A calendar date.
    Date,
    /// A date and time.
    DateTime,
}

/// A text field of a form.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct StringSchema {
    /// Always `"string"`.
    #[serde(rename = "type")]
    pub kind: StringTypeTag,
    /// Field label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Field help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Fewest characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_length: Option<u64>,
    /// Most characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_length: Option<u64>,
    /// Expected format.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<StringFormat>,
    /// Pre-filled value (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
}

impl StringSchema {
    /// A plain text field.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(StringSchema {
    with_title(title: String),
    with_description(description: String),
    with_min_length(min_length: u64),
    with_max_length(max_length: u64),
    with_format(format: StringFormat),
    with_default(default: String),
});

/// The `type` of a [`NumberSchema`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum NumberType {
    /// Any number.
    #[default]
    Number,
    /// Whole numbers only.
    Integer,
}

/// A numeric field of a form.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct NumberSchema {
    /// `"number"` or `"integer"`.
    #[serde(rename = "type")]
    pub kind: NumberType,
    /// Field label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Field help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Smallest value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minimum: Option<f64>,
    /// Largest value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub maximum: Option<f64>,
    /// Pre-filled value (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<f64>,
}

impl NumberSchema {
    /// A field of `kind` numbers.
    pub fn new(kind: NumberType) -> Self {
        Self {
            kind,
            ..Self::default()
        }
    }
}

setters!(NumberSchema {
    with_title(title: String),
    with_description(description: String),
    with_minimum(minimum: f64),
    with_maximum(maximum: f64),
    with_default(default: f64),
});

/// A yes/no field of a form.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct BooleanSchema {
    /// Always `"boolean"`.
    #[serde(rename = "type")]
    pub kind: BooleanTypeTag,
    /// Field label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Field help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Pre-filled value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<bool>,
}

impl BooleanSchema {
    /// A yes/no field.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(BooleanSchema {
    with_title(title: String),
    with_description(description: String),
    with_default(default: bool),
});

/// One option of a titled enum: a value and its label.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct EnumOption {
    /// The value sent back.
    #[serde(rename = "const")]
    pub value: String,
    /// The label shown.
    pub title: String,
}

impl EnumOption {
    /// `value` shown as `title`.
    pub fn new(value: impl Into<String>, title: impl Into<String>) -> Self {
        Self {
            value: value.into(),
            title: title.into(),
        }
    }
}

/// Pick one of plain string values (2025-11-25+).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct UntitledSingleSelectEnumSchema {
    /// Always `"string"`.
    #[serde(rename = "type")]
    pub kind: StringTypeTag,
    /// The values to choose from.
    #[serde(rename = "enum")]
    pub values: Vec<String>,
    /// Field label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Field help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Pre-selected value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
}

impl UntitledSingleSelectEnumSchema {
    /// Choose one of `values`.
    pub fn new(values: Vec<String>) -> Self {
        Self {
            values,
            ..Self::default()
        }
    }
}

setters!(UntitledSingleSelectEnumSchema {
    with_title(title: String),
    with_description(description: String),
    with_default(default: String),
});

/// Pick one of labelled values (2025-11-25+).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TitledSingleSelectEnumSchema {
    /// Always `"string"`.
    #[serde(rename = "type")]
    pub kind: StringTypeTag,
    /// The options.
    pub one_of: Vec<EnumOption>,
    /// Field label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Field help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Pre-selected value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
}

impl TitledSingleSelectEnumSchema {
    /// Choose one of `options`.
    pub fn new(options: Vec<EnumOption>) -> Self {
        Self {
            one_of: options,
            ..Self::default()
        }
    }
}

setters!(TitledSingleSelectEnumSchema {
    with_title(title: String),
    with_description(description: String),
    with_default(default: String),
});

/// The `items` of an [`UntitledMultiSelectEnumSchema`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct UntitledEnumItems {
    /// Always `"string"`.
    #[serde(rename = "type")]
    pub kind: StringTypeTag,
    /// The values to choose from.
    #[serde(rename = "enum")]
    pub values: Vec<String>,
}

impl UntitledEnumItems {
    /// Items drawn from `values`.
    pub fn new(values: Vec<String>) -> Self {
        Self {
            kind: StringTypeTag,
            values,
        }
    }
}

/// Pick several of plain string values (2025-11-25+).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct UntitledMultiSelectEnumSchema {
    /// Always `"array"`.
    #[serde(rename = "type")]
    pub kind: ArrayTypeTag,
    /// The values to choose from.
    pub items: UntitledEnumItems,
    /// Field label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Field help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Fewest selections.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_items: Option<u64>,
    /// Most selections.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_items: Option<u64>,
    /// Pre-selected values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Vec<String>>,
}

impl UntitledMultiSelectEnumSchema {
    /// Choose any of `values`.
    pub fn new(values: Vec<String>) -> Self {
        Self {
            items: UntitledEnumItems::new(values),
            ..Self::default()
        }
    }
}

setters!(UntitledMultiSelectEnumSchema {
    with_title(title: String),
    with_description(description: String),
    with_min_items(min_items: u64),
    with_max_items(max_items: u64),
    with_default(default: Vec<String>),
});

/// The `items` of a [`TitledMultiSelectEnumSchema`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TitledEnumItems {
    /// The options.
    pub any_of: Vec<EnumOption>,
}

impl TitledEnumItems {
    /// Items drawn from `options`.
    pub fn new(options: Vec<EnumOption>) -> Self {
        Self { any_of: options }
    }
}

/// Pick several of labelled values (2025-11-25+).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TitledMultiSelectEnumSchema {
    /// Always `"array"`.
    #[serde(rename = "type")]
    pub kind: ArrayTypeTag,
    /// The options.
    pub items: TitledEnumItems,
    /// Field label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Field help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Fewest selections.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_items: Option<u64>,
    /// Most selections.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_items: Option<u64>,
    /// Pre-selected values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Vec<String>>,
}

impl TitledMultiSelectEnumSchema {
    /// Choose any of `options`.
    pub fn new(options: Vec<EnumOption>) -> Self {
        Self {
            items: TitledEnumItems::new(options),
            ..Self::default()
        }
    }
}

setters!(TitledMultiSelectEnumSchema {
    with_title(title: String),
    with_description(description: String),
    with_min_items(min_items: u64),
    with_max_items(max_items: u64),
    with_default(default: Vec<String>),
});

/// Pick one value, labelled by the non-standard `enumNames` (2025-06-18's
/// `EnumSchema`; use [`TitledSingleSelectEnumSchema`] instead).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct LegacyTitledEnumSchema {
    /// Always `"string"`.
    #[serde(rename = "type")]
    pub kind: StringTypeTag,
    /// The values to choose from.
    #[serde(rename = "enum")]
    pub values: Vec<String>,
    /// Labels, in the order of `values`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enum_names: Option<Vec<String>>,
    /// Field label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Field help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Pre-selected value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
}

impl LegacyTitledEnumSchema {
    /// Choose one of `values`, labelled by `names`.
    pub fn new(values: Vec<String>, names: Vec<String>) -> Self {
        Self {
            values,
            enum_names: Some(names),
            ..Self::default()
        }
    }
}

setters!(LegacyTitledEnumSchema {
    with_title(title: String),
    with_description(description: String),
    with_default(default: String),
});

/// Which field schema a JSON object is, decided by `type` and the keywords
/// that tell the enum variants apart.
#[derive(Clone, Copy, PartialEq, Eq)]
enum FieldKind {
    String,
    Number,
    Boolean,
    UntitledSingle,
    TitledSingle,
    UntitledMulti,
    TitledMulti,
    Legacy,
}

const FIELD_TYPES: &[&str] = &["string", "number", "integer", "boolean", "array"];

fn field_kind<E: de::Error>(map: &JsonObject, what: &str) -> Result<FieldKind, E> {
    let kind = dispatch::tag_of::<E>(map, "type", what, FIELD_TYPES)?;
    Ok(match kind.as_str() {
        "string" if map.contains_key("oneOf") => FieldKind::TitledSingle,
        "string" if map.contains_key("enum") && map.contains_key("enumNames") => FieldKind::Legacy,
        "string" if map.contains_key("enum") => FieldKind::UntitledSingle,
        "string" => FieldKind::String,
        "number" | "integer" => FieldKind::Number,
        "boolean" => FieldKind::Boolean,
        "array" => match map.get("items") {
            Some(Value::Object(items)) if items.contains_key("anyOf") => FieldKind::TitledMulti,
            _ => FieldKind::UntitledMulti,
        },
        other => return Err(dispatch::unknown_tag(other, "type", what, FIELD_TYPES)),
    })
}

/// A form field's schema: only primitive types, no nesting.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
#[non_exhaustive]
pub enum PrimitiveSchemaDefinition {
    /// A text field.
    String(StringSchema),
    /// A numeric field.
    Number(NumberSchema),
    /// A yes/no field.
    Boolean(BooleanSchema),
    /// Pick one plain value.
    UntitledSingleSelect(UntitledSingleSelectEnumSchema),
    /// Pick one labelled value.
    TitledSingleSelect(TitledSingleSelectEnumSchema),
    /// Pick several plain values.
    UntitledMultiSelect(UntitledMultiSelectEnumSchema),
    /// Pick several labelled values.
    TitledMultiSelect(TitledMultiSelectEnumSchema),
    /// Pick one value labelled by `enumNames`.
    LegacyTitled(LegacyTitledEnumSchema),
}

impl<'de> Deserialize<'de> for PrimitiveSchemaDefinition {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        const WHAT: &str = "form field schema";
        let map = dispatch::read_object(deserializer, WHAT)?;
        match field_kind::<D::Error>(&map, WHAT)? {
            FieldKind::String => dispatch::from_object(map).map(Self::String),
            FieldKind::Number => dispatch::from_object(map).map(Self::Number),
            FieldKind::Boolean => dispatch::from_object(map).map(Self::Boolean),
            FieldKind::UntitledSingle => dispatch::from_object(map).map(Self::UntitledSingleSelect),
            FieldKind::TitledSingle => dispatch::from_object(map).map(Self::TitledSingleSelect),
            FieldKind::UntitledMulti => dispatch::from_object(map).map(Self::UntitledMultiSelect),
            FieldKind::TitledMulti => dispatch::from_object(map).map(Self::TitledMultiSelect),
            FieldKind::Legacy => dispatch::from_object(map).map(Self::LegacyTitled),
        }
    }
}

/// An enum field's schema (2025-11-25+; in 2025-06-18 `EnumSchema` was what
/// is now [`LegacyTitledEnumSchema`]).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
#[non_exhaustive]
pub enum EnumSchema {
    /// Pick one plain value.
    UntitledSingleSelect(UntitledSingleSelectEnumSchema),
    /// Pick one labelled value.
    TitledSingleSelect(TitledSingleSelectEnumSchema),
    /// Pick several plain values.
    UntitledMultiSelect(UntitledMultiSelectEnumSchema),
    /// Pick several labelled values.
    TitledMultiSelect(TitledMultiSelectEnumSchema),
    /// Pick one value labelled by `enumNames`.
    LegacyTitled(LegacyTitledEnumSchema),
}

impl<'de> Deserialize<'de> for EnumSchema {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        const WHAT: &str = "enum schema";
        let map = dispatch::read_object(deserializer, WHAT)?;
        match field_kind::<D::Error>(&map, WHAT)? {
            FieldKind::UntitledSingle => dispatch::from_object(map).map(Self::UntitledSingleSelect),
            FieldKind::TitledSingle => dispatch::from_object(map).map(Self::TitledSingleSelect),
            FieldKind::UntitledMulti => dispatch::from_object(map).map(Self::UntitledMultiSelect),
            FieldKind::TitledMulti => dispatch::from_object(map).map(Self::TitledMultiSelect),
            FieldKind::Legacy => dispatch::from_object(map).map(Self::LegacyTitled),
            _ => Err(de::Error::custom(
                "enum schema needs `enum`, `oneOf`, or `type: array` with enum items",
            )),
        }
    }
}

/// A single-select enum field's schema.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
#[non_exhaustive]
pub enum SingleSelectEnumSchema {
    /// Pick one plain value.
    Untitled(UntitledSingleSelectEnumSchema),
    /// Pick one labelled value.
    Titled(TitledSingleSelectEnumSchema),
}

impl<'de> Deserialize<'de> for SingleSelectEnumSchema {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let map = dispatch::read_object(deserializer, "single-select enum schema")?;
        if map.contains_key("oneOf") {
            dispatch::from_object(map).map(Self::Titled)
        } else {
            dispatch::from_object(map).map(Self::Untitled)
        }
    }
}

/// A multi-select enum field's schema.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
#[non_exhaustive]
pub enum MultiSelectEnumSchema {
    /// Pick several plain values.
    Untitled(UntitledMultiSelectEnumSchema),
    /// Pick several labelled values.
    Titled(TitledMultiSelectEnumSchema),
}

impl<'de> Deserialize<'de> for MultiSelectEnumSchema {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let map = dispatch::read_object(deserializer, "multi-select enum schema")?;
        match map.get("items") {
            Some(Value::Object(items)) if items.contains_key("anyOf") => {
                dispatch::from_object(map).map(Self::Titled)
            }
            _ => dispatch::from_object(map).map(Self::Untitled),
        }
    }
}

macro_rules! field_from {
    ($($ty:ident => $variant:ident),+ $(,)?) => {
        $(
            impl From<$ty> for PrimitiveSchemaDefinition {
                fn from(schema: $ty) -> Self {
                    PrimitiveSchemaDefinition::$variant(schema)
                }
            }
        )+
    };
}

field_from!(
    StringSchema => String,
    NumberSchema => Number,
    BooleanSchema => Boolean,
    UntitledSingleSelectEnumSchema => UntitledSingleSelect,
    TitledSingleSelectEnumSchema => TitledSingleSelect,
    UntitledMultiSelectEnumSchema => UntitledMultiSelect,
    TitledMultiSelectEnumSchema => TitledMultiSelect,
    LegacyTitledEnumSchema => LegacyTitled,
);

impl From<EnumSchema> for PrimitiveSchemaDefinition {
    fn from(schema: EnumSchema) -> Self {
        match schema {
            EnumSchema::UntitledSingleSelect(s) => s.into(),
            EnumSchema::TitledSingleSelect(s) => s.into(),
            EnumSchema::UntitledMultiSelect(s) => s.into(),
            EnumSchema::TitledMultiSelect(s) => s.into(),
            EnumSchema::LegacyTitled(s) => s.into(),
        }
    }
}

/// The form an elicitation asks the user to fill: a flat object schema
/// (the inline `requestedSchema` of [`ElicitRequestFormParams`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ElicitRequestedSchema {
    /// The JSON Schema dialect, if stated.
    #[serde(rename = "$schema", default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// Always `"object"`.
    #[serde(rename = "type")]
    pub kind: ObjectTypeTag,
    /// The fields, by name.
    pub properties: BTreeMap<String, PrimitiveSchemaDefinition>,
    /// Names of the fields that must be filled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<Vec<String>>,
}

impl ElicitRequestedSchema {
    /// A form with no fields.
    pub fn new() -> Self {
        Self::default()
    }
    /// Adds field `name`.
    #[must_use]
    pub fn with_property(
        mut self,
        name: impl Into<String>,
        schema: impl Into<PrimitiveSchemaDefinition>,
    ) -> Self {
        self.properties.insert(name.into(), schema.into());
        self
    }
}

setters!(ElicitRequestedSchema {
    with_schema(schema: String),
    with_required(required: Vec<String>),
});

/// Params of a form-mode elicitation: non-sensitive input through a form
/// the client renders.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ElicitRequestFormParams {
    /// `"form"`, or absent (form is the default mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<FormModeTag>,
    /// What is being asked, shown to the user.
    pub message: String,
    /// The form to fill.
    pub requested_schema: ElicitRequestedSchema,
    /// Asks for the request to run as a task (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskMetadata>,
    /// Request metadata (2025-11-25).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}

impl ElicitRequestFormParams {
    /// Asks `message` with the form `requested_schema` (no explicit `mode`).
    pub fn new(message: impl Into<String>, requested_schema: ElicitRequestedSchema) -> Self {
        Self {
            mode: None,
            message: message.into(),
            requested_schema,
            task: None,
            meta: None,
        }
    }
}

setters!(ElicitRequestFormParams {
    with_mode(mode: FormModeTag),
    with_task(task: TaskMetadata),
    with_meta(meta: RequestMeta),
});

/// Params of a URL-mode elicitation: the user completes a flow at a URL,
/// outside the client (2025-11-25+).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ElicitRequestUrlParams {
    /// Always `"url"`.
    pub mode: UrlModeTag,
    /// Why the user should go there.
    pub message: String,
    /// Where the user should go.
    pub url: String,
    /// Identifies the elicitation (2025-11-25 only, required there).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elicitation_id: Option<String>,
    /// Asks for the request to run as a task (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskMetadata>,
    /// Request metadata (2025-11-25).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}

impl ElicitRequestUrlParams {
    /// Sends the user to `url`, explaining why in `message`.
    pub fn new(message: impl Into<String>, url: impl Into<String>) -> Self {
        Self {
            mode: UrlModeTag,
            message: message.into(),
            url: url.into(),
            elicitation_id: None,
            task: None,
            meta: None,
        }
    }
}

setters!(ElicitRequestUrlParams {
    with_elicitation_id(elicitation_id: String),
    with_task(task: TaskMetadata),
    with_meta(meta: RequestMeta),
});

/// Params of `elicitation/create`: form or URL mode, told apart by `mode`
/// (absent means form).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
#[non_exhaustive]
pub enum ElicitRequestParams {
    /// Form mode.
    Form(ElicitRequestFormParams),
    /// URL mode.
    Url(ElicitRequestUrlParams),
}

impl<'de> Deserialize<'de> for ElicitRequestParams {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        const WHAT: &str = "elicitation";
        const MODES: &[&str] = &["form", "url"];
        let map = dispatch::read_object(deserializer, WHAT)?;
        if !map.contains_key("mode") {
            return dispatch::from_object(map).map(Self::Form);
        }
        match dispatch::tag_of::<D::Error>(&map, "mode", WHAT, MODES)?.as_str() {
            "form" => dispatch::from_object(map).map(Self::Form),
            "url" => dispatch::from_object(map).map(Self::Url),
            other => Err(dispatch::unknown_tag(other, "mode", WHAT, MODES)),
        }
    }
}

impl From<ElicitRequestFormParams> for ElicitRequestParams {
    fn from(params: ElicitRequestFormParams) -> Self {
        ElicitRequestParams::Form(params)
    }
}

impl From<ElicitRequestUrlParams> for ElicitRequestParams {
    fn from(params: ElicitRequestUrlParams) -> Self {
        ElicitRequestParams::Url(params)
    }
}

/// What the user did with an elicitation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum ElicitAction {
    /// Submitted or confirmed.
    Accept,
    /// Explicitly refused.
    Decline,
    /// Dismissed without choosing.
    Cancel,
}

/// One submitted form value.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
#[non_exhaustive]
pub enum ElicitValue {
    /// Text or a single-select choice.
    String(String),
    /// A whole number.
    Integer(i64),
    /// A fractional number (for `"type": "number"` fields).
    Number(f64),
    /// A yes/no answer.
    Boolean(bool),
    /// Multi-select choices.
    StringArray(Vec<String>),
}

impl<'de> Deserialize<'de> for ElicitValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        match value {
            Value::String(text) => Ok(Self::String(text)),
            Value::Bool(flag) => Ok(Self::Boolean(flag)),
            Value::Number(number) => match (number.as_i64(), number.as_f64()) {
                (Some(integer), _) => Ok(Self::Integer(integer)),
                (None, Some(float)) => Ok(Self::Number(float)),
                (None, None) => Err(de::Error::custom(
                    "form value is not a representable number",
                )),
            },
            Value::Array(_) => dispatch::from_value(value).map(Self::StringArray),
            other => Err(de::Error::custom(format_args!(
                "form value is {}; expected a string, number, bool, or array of strings",
                dispatch::kind_of(&other)
            ))),
        }
    }
}

impl From<String> for ElicitValue {
    fn from(text: String) -> Self {
        ElicitValue::String(text)
    }
}

impl From<&str> for ElicitValue {
    fn from(text: &str) -> Self {
        ElicitValue::String(text.to_owned())
    }
}

impl From<i64> for ElicitValue {
    fn from(n: i64) -> Self {
        ElicitValue::Integer(n)
    }
}

impl From<f64> for ElicitValue {
    fn from(n: f64) -> Self {
        ElicitValue::Number(n)
    }
}

impl From<bool> for ElicitValue {
    fn from(flag: bool) -> Self {
        ElicitValue::Boolean(flag)
    }
}

impl From<Vec<String>> for ElicitValue {
    fn from(choices: Vec<String>) -> Self {
        ElicitValue::StringArray(choices)
    }
}

/// The client's answer to `elicitation/create`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ElicitResult {
    /// What the user did.
    pub action: ElicitAction,
    /// The submitted values, by field; only for an accepted form.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<BTreeMap<String, ElicitValue>>,
    /// What kind of result this is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// Metadata attached to the result (2025-06-18 to 2025-11-25).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMeta>,
}

impl ElicitResult {
    /// The user did `action`, with no content.
    pub fn new(action: ElicitAction) -> Self {
        Self {
            action,
            content: None,
            result_type: None,
            meta: None,
        }
    }
    /// The user accepted the form with these values.
    pub fn accept(content: BTreeMap<String, ElicitValue>) -> Self {
        Self::new(ElicitAction::Accept).with_content(content)
    }

    /// The user accepted the form with `values`: any value that serializes
    /// to a flat JSON object of strings, numbers, booleans and string
    /// arrays (a struct deriving `Serialize`, a `json!({...})`). Fields
    /// that serialize to `null` (an `Option` left `None`) are left out.
    ///
    /// # Errors
    /// When `values` does not serialize, is not an object, or holds a value
    /// a form field cannot take (a nested object, an array of numbers).
    ///
    /// # Examples
    /// ```
    /// use mcp_types::{ElicitAction, ElicitResult, ElicitValue};
    ///
    /// #[derive(serde::Serialize)]
    /// struct Contact { name: String, age: i64, newsletter: Option<bool> }
    ///
    /// let answer = ElicitResult::accept_from(&Contact { name: "Ada".into(), age: 36, newsletter: None })?;
    /// assert_eq!(answer.action, ElicitAction::Accept);
    /// let content = answer.content.expect("values");
    /// assert_eq!(content["age"], ElicitValue::Integer(36));
    /// assert!(!content.contains_key("newsletter"));
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    pub fn accept_from(values: &impl Serialize) -> Result<Self, serde_json::Error> {
        let Value::Object(object) = serde_json::to_value(values)? else {
            return Err(serde::ser::Error::custom(
                "an accepted form's values must serialize to a JSON object",
            ));
        };
        let mut content = BTreeMap::new();
        for (field, value) in object {
            if value.is_null() {
                continue;
            }
            let value = ElicitValue::deserialize(value).map_err(|error| {
                serde::ser::Error::custom(format_args!("form field `{field}`: {error}"))
            })?;
            content.insert(field, value);
        }
        Ok(Self::accept(content))
    }
}

setters!(ElicitResult {
    with_content(content: BTreeMap<String, ElicitValue>),
    with_result_type(result_type: ResultType),
    with_meta(meta: ResultMeta),
});

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn field_schemas_dispatch_on_type_and_keywords() {
        let cases = [
            (json!({"type": "string", "format": "email"}), "String"),
            (json!({"type": "integer", "minimum": 0.5}), "Number"),
            (json!({"type": "boolean", "default": true}), "Boolean"),
            (
                json!({"type": "string", "enum": ["a", "b"]}),
                "UntitledSingleSelect",
            ),
            (
                json!({"type": "string", "oneOf": [{"const": "a", "title": "A"}]}),
                "TitledSingleSelect",
            ),
            (
                json!({"type": "array", "items": {"type": "string", "enum": ["a"]}}),
                "UntitledMultiSelect",
            ),
            (
                json!({"type": "array", "items": {"anyOf": [{"const": "a", "title": "A"}]}}),
                "TitledMultiSelect",
            ),
            (
                json!({"type": "string", "enum": ["a"], "enumNames": ["A"]}),
                "LegacyTitled",
            ),
        ];
        for (case, expected) in cases {
            let schema: PrimitiveSchemaDefinition = serde_json::from_value(case.clone()).unwrap();
            assert!(
                format!("{schema:?}").starts_with(expected),
                "{case} gave {schema:?}"
            );
            assert_eq!(serde_json::to_value(&schema).unwrap(), case);
        }
        let err = serde_json::from_value::<PrimitiveSchemaDefinition>(json!({"type": "object"}))
            .unwrap_err();
        assert!(
            err.to_string()
                .contains("unknown form field schema type `object`"),
            "{err}"
        );
        assert!(serde_json::from_value::<EnumSchema>(json!({"type": "string"})).is_err());
    }

    #[test]
    fn elicit_params_dispatch_on_mode_which_form_may_omit() {
        let form = json!({"message": "m", "requestedSchema": {"type": "object", "properties": {}}});
        let params: ElicitRequestParams = serde_json::from_value(form.clone()).unwrap();
        assert!(matches!(
            params,
            ElicitRequestParams::Form(ElicitRequestFormParams { mode: None, .. })
        ));
        assert_eq!(serde_json::to_value(&params).unwrap(), form);

        let url = json!({"mode": "url", "message": "m", "url": "https://example.com", "elicitationId": "e1"});
        let params: ElicitRequestParams = serde_json::from_value(url.clone()).unwrap();
        assert!(matches!(params, ElicitRequestParams::Url(_)));
        assert_eq!(serde_json::to_value(&params).unwrap(), url);

        let err =
            serde_json::from_value::<ElicitRequestParams>(json!({"mode": "voice", "message": "m"}))
                .unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown elicitation mode `voice`; expected one of form, url"
        );
    }

    #[test]
    fn url_params_alone_require_their_mode() {
        let err =
            serde_json::from_value::<ElicitRequestUrlParams>(json!({"message": "m", "url": "u"}))
                .unwrap_err();
        assert!(err.to_string().contains("mode"), "{err}");
    }

    #[test]
    fn elicit_result_values_keep_their_json_types() {
        let input = json!({"action": "accept", "content": {"n": "x", "age": 30, "ratio": 0.5, "ok": true, "tags": ["a"]}});
        let result: ElicitResult = serde_json::from_value(input.clone()).unwrap();
        let content = result.content.as_ref().unwrap();
        assert_eq!(content["age"], ElicitValue::Integer(30));
        assert_eq!(content["ratio"], ElicitValue::Number(0.5));
        assert_eq!(serde_json::to_value(&result).unwrap(), input);
        assert!(serde_json::from_value::<ElicitValue>(json!({"a": 1})).is_err());
    }
}
