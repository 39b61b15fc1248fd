//! Crate-internal macros that cut the boilerplate of wire types.

/// Declares a zero-sized type standing for one fixed JSON string, such as the
/// `"type": "text"` of a text block: it serializes as that string and refuses
/// any other when read.
macro_rules! wire_tag {
    ($(#[$attr:meta])* $name:ident = $value:literal) => {
        $(#[$attr])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
        pub struct $name;

        impl $name {
            /// The exact string this tag stands for on the wire.
            pub const VALUE: &'static str = $value;
        }

        impl ::serde::Serialize for $name {
            fn serialize<S: ::serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str($value)
            }
        }

        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(
                deserializer: D,
            ) -> Result<Self, D::Error> {
                let text =
                    <::std::borrow::Cow<'de, str> as ::serde::Deserialize>::deserialize(deserializer)?;
                if text == $value {
                    Ok($name)
                } else {
                    Err(::serde::de::Error::custom(format_args!(
                        "expected `{}`, found `{}`",
                        $value, text
                    )))
                }
            }
        }

        impl ::schemars::JsonSchema for $name {
            fn schema_name() -> ::std::borrow::Cow<'static, str> {
                stringify!($name).into()
            }
            fn json_schema(_: &mut ::schemars::SchemaGenerator) -> ::schemars::Schema {
                ::schemars::json_schema!({ "type": "string", "const": $value })
            }
            fn inline_schema() -> bool {
                true
            }
        }
    };
}

/// Generates `with_*` builder setters for the optional fields of a struct:
/// `setters!(Tool { with_title(title: String), ... })` gives
/// `fn with_title(self, value: impl Into<String>) -> Self`.
macro_rules! setters {
    ($ty:ty { $( $method:ident($field:ident: $fty:ty) ),* $(,)? }) => {
        impl $ty {
            $(
                #[doc = concat!("Sets `", stringify!($field), "`.")]
                #[must_use]
                pub fn $method(mut self, value: impl Into<$fty>) -> Self {
                    self.$field = Some(value.into());
                    self
                }
            )*
        }
    };
}

/// Implements `Deserialize` for a union whose variants are told apart by a
/// string member (`type`, `method`, ...), plus `From<Variant>` for each
/// variant. The enum itself derives `Serialize` with `#[serde(untagged)]`:
/// every variant carries its own tag.
macro_rules! tagged_union {
    ($ty:ident, $key:literal, $what:literal, { $($tag:literal => $variant:ident($inner:ty)),+ $(,)? }) => {
        impl<'de> ::serde::Deserialize<'de> for $ty {
            fn deserialize<D: ::serde::Deserializer<'de>>(
                deserializer: D,
            ) -> Result<Self, D::Error> {
                const EXPECTED: &[&str] = &[$($tag),+];
                let map = crate::dispatch::read_object(deserializer, $what)?;
                let tag = crate::dispatch::tag_of::<D::Error>(&map, $key, $what, EXPECTED)?;
                match tag.as_str() {
                    $($tag => crate::dispatch::from_object(map).map($ty::$variant),)+
                    other => Err(crate::dispatch::unknown_tag(other, $key, $what, EXPECTED)),
                }
            }
        }

        $(
            impl From<$inner> for $ty {
                fn from(value: $inner) -> Self {
                    $ty::$variant(value)
                }
            }
        )+
    };
}
