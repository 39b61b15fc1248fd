//! Every list result, paged with opaque cursors by one generic function.

use mcp_types::{
    ErrorObject, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    ListToolsResult, PaginatedRequestParams, Prompt, Resource, ResourceTemplate, Tool,
};

use super::{Requester, Runner};
use crate::catalog::Snapshot;
use crate::entries::{PromptEntry, ResourceEntry, TemplateEntry, ToolEntry};

/// One page of `items` from `cursor`, and the cursor of the next page.
/// A cursor is `{start}.{tag}`: where the page starts, and the tag of the
/// list it was cut from ([`Tags`](crate::catalog::Tags)); a cursor of
/// another tag (the list changed since), or one this server did not make,
/// is refused with `-32602`, so the client lists again from the start
/// instead of skipping or repeating entries.
fn page<T: Clone>(
    items: &[T],
    cursor: Option<&str>,
    size: usize,
    tag: u64,
) -> Result<(Vec<T>, Option<String>), ErrorObject> {
    let start = match cursor {
        None => 0,
        Some(cursor) => {
            let (start, issued) = cursor
                .split_once('.')
                .and_then(|(start, issued)| {
                    let start = start.parse::<usize>().ok()?;
                    let issued = u64::from_str_radix(issued, 16).ok()?;
                    Some((start, issued))
                })
                .filter(|&(start, _)| start <= items.len())
                .ok_or_else(|| ErrorObject::invalid_params(format!("invalid cursor `{cursor}`")))?;
            if issued != tag {
                return Err(ErrorObject::invalid_params(format!(
                    "cursor `{cursor}` is stale: the list changed since it was handed out; \
                     list again without a cursor"
                )));
            }
            start
        }
    };
    let end = start.saturating_add(size).min(items.len());
    let next = (end < items.len()).then(|| format!("{end}.{tag:x}"));
    Ok((items[start..end].to_vec(), next))
}

fn cursor_of(params: &Option<PaginatedRequestParams>) -> Option<&str> {
    params.as_ref().and_then(|p| p.cursor.as_deref())
}

/// A list result: which registry items it lists, and how it is built from a page.
pub(super) trait Listing: Sized {
    /// The item listed.
    type Item: Clone;
    /// Every item the catalog holds, in order, but those of an extension
    /// not active for this client (`active(owner)` false): borrowed, as
    /// only one page of them is cloned into the result.
    fn items(catalog: &Snapshot, active: impl Fn(Option<usize>) -> bool) -> Vec<&Self::Item>;
    /// The tag of the list in `catalog`, which its cursors carry.
    fn tag(catalog: &Snapshot) -> u64;
    /// The result for one page and the cursor of the next.
    fn from_page(items: Vec<Self::Item>, next_cursor: Option<String>) -> Self;
}

macro_rules! listing {
    ($result:ident, $item:ty, $field:ident, $entry:ident) => {
        impl Listing for $result {
            type Item = $item;
            fn items(catalog: &Snapshot, active: impl Fn(Option<usize>) -> bool) -> Vec<&$item> {
                catalog
                    .$field
                    .iter()
                    .filter(|e| active(e.owner()))
                    .map(|e| &e.$entry)
                    .collect()
            }
            fn tag(catalog: &Snapshot) -> u64 {
                catalog.tags.$field
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
        let catalog = self.registry.catalog.snapshot();
        let all = R::items(&catalog, |owner| {
            owner.is_none_or(|i| active.get(i).copied().unwrap_or(false))
        });
        let tag = R::tag(&catalog);
        let (items, next) = page(&all, cursor_of(params), self.registry.page_size, tag)?;
        Ok(R::from_page(items.into_iter().cloned().collect(), next))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_types::ErrorCode;

    #[test]
    fn pages_hand_out_cursors_until_the_end() {
        let items: Vec<u32> = (0..5).collect();
        let (first, next) = page(&items, None, 2, 7).expect("page");
        assert_eq!(first, vec![0, 1]);
        let (second, next) = page(&items, next.as_deref(), 2, 7).expect("page");
        assert_eq!(second, vec![2, 3]);
        let (last, next) = page(&items, next.as_deref(), 2, 7).expect("page");
        assert_eq!((last, next), (vec![4], None));
        for bad in ["nope", "2", "99.7", "1.zz", ".7"] {
            let error = page(&items, Some(bad), 2, 7).expect_err(bad);
            assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
        }
    }

    #[test]
    fn a_cursor_into_a_list_that_changed_is_refused() {
        let items: Vec<u32> = (0..5).collect();
        let (_, next) = page(&items, None, 2, 7).expect("page");
        let error = page(&items, next.as_deref(), 2, 8).expect_err("stale");
        assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
        assert!(error.message.contains("stale"), "{}", error.message);
    }
}
