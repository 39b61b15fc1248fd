//! The split of a command line into words, as `--stdio` takes it: one
//! rule with no dependency on the rest of the CLI, so the tests that run
//! the guide's command lines (tests/guide_gateway.rs) split them by it too.

/// Splits a command line on whitespace, honouring single and double quotes
/// and backslash escapes (no expansion: nothing runs through a shell).
pub(crate) fn split_command(line: &str) -> Result<Vec<String>, &'static str> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some('"'), '\\') | (None, '\\') => {
                word.push(chars.next().ok_or("a trailing backslash")?);
                in_word = true;
            }
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                in_word = true;
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            (None, c) => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if quote.is_some() {
        return Err("a quote is not closed");
    }
    if in_word {
        words.push(word);
    }
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_lines_split_like_a_shell_without_expansion() {
        let words =
            split_command(r#"python3 "my server.py" --name 'a b' x\ y $HOME"#).expect("splits");
        assert_eq!(
            words,
            ["python3", "my server.py", "--name", "a b", "x y", "$HOME"]
        );
        assert_eq!(split_command("  ").expect("splits"), Vec::<String>::new());
        assert_eq!(split_command("a ''").expect("splits"), ["a", ""]);
        assert!(split_command("a 'b").is_err());
    }
}
