//! Every list result, paged with opaque cursors by one generic function.

use mcp_types::{
    ErrorObject, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    ListToolsResult, PaginatedRequestParams, Prompt, Resource, ResourceTemplate, Tool,
};

use super::{Requester, Runner};
use crate::registry::*;

fn page<T: Clone>(
    items: &[T],
    cursor: Option<&str>,
    size: usize,
) -> Result<(Vec<T>, Option<String>), ErrorObject> {
    let start = match cursor {
        None => 0,
        Some(cursor) => cursor
            .parse::<usize>()
            .ok()
            .filter(|&start| start <= items.len())
            .ok_or_else(|| ErrorObject::invalid_params(format!("invalid cursor `{cursor}`")))?,
    };
    let end = start.saturating_add(size).min(items.len());
    let next = (end < items.len()).then(|| end.to_string());
    Ok((items[start..end].to_vec(), next))
}

fn cursor_of(params: &Option<PaginatedRequestParams>) -> Option<&str> {
    params.as_ref().and_then(|p| p.cursor.as_deref())
}

/// A list result: which registry items it lists, and how it is built from a page.
pub(super) trait Listing: Sized {
    /// The item listed.
    type Item: Clone;
    /// Every item the registry holds, in registration order, but those of
    /// an extension not active for this client (`active(owner)` false).
    fn items(registry: &Registry, active: impl Fn(Option<usize>) -> bool) -> Vec<Self::Item>;
    /// The result for one page and the cursor of the next.
    fn from_page(items: Vec<Self::Item>, next_cursor: Option<String>) -> Self;
}

macro_rules! listing {
    ($result:ident, $item:ty, $field:ident, $entry:ident) => {
        impl Listing for $result {
            type Item = $item;
            fn items(registry: &Registry, active: impl Fn(Option<usize>) -> bool) -> Vec<$item> {
                registry
                    .$field
                    .iter()
                    .filter(|e| active(e.owner()))
                    .map(|e| e.$entry.clone())
                    .collect()
            }
            fn from_page(items: Vec<$item>, next_cursor: Option<String>) -> Self {
                let mut result = $result::new(items);
                result.next_cursor = next_cursor;
                result
            }
        }
    };
}

/// The extension an entry belongs to, if any.
trait Owned {
    fn owner(&self) -> Option<usize>;
}

macro_rules! owned {
    ($($entry:ty),*) => {
        $(impl Owned for $entry {
            fn owner(&self) -> Option<usize> {
                self.owner
            }
        })*
    };
}

owned!(ToolEntry, ResourceEntry, TemplateEntry);

impl Owned for PromptEntry {
    fn owner(&self) -> Option<usize> {
        None
    }
}

listing!(ListToolsResult, Tool, tools, tool);
listing!(ListResourcesResult, Resource, resources, resource);
listing!(
    ListResourceTemplatesResult,
    ResourceTemplate,
    templates,
    template
);
listing!(ListPromptsResult, Prompt, prompts, prompt);

impl Runner {
    /// One page of a list method.
    pub(super) fn list<R: Listing>(
        &self,
        params: &Option<PaginatedRequestParams>,
        requester: &Requester,
    ) -> Result<R, ErrorObject> {
        let active = self.active_extensions(requester);
        let all = R::items(&self.registry, |owner| {
            owner.is_none_or(|i| active.get(i).copied().unwrap_or(false))
        });
        let (items, next) = page(&all, cursor_of(params), self.registry.page_size)?;
        Ok(R::from_page(items, next))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_types::ErrorCode;

    #[test]
    fn pages_hand_out_cursors_until_the_end() {
        let items: Vec<u32> = (0..5).collect();
        let (first, next) = page(&items, None, 2).expect("page");
        assert_eq!(first, vec![0, 1]);
        let (second, next) = page(&items, next.as_deref(), 2).expect("page");
        assert_eq!(second, vec![2, 3]);
        let (last, next) = page(&items, next.as_deref(), 2).expect("page");
        assert_eq!((last, next), (vec![4], None));
        let error = page(&items, Some("nope"), 2).expect_err("a bad cursor");
        assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
        assert!(page(&items, Some("99"), 2).is_err());
    }
}
