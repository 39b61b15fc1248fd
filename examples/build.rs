//! Sets `cfg(mcp_interop_python)` when `MCP_INTEROP_PYTHON` names a Python
//! with the official SDK, so the interop tests run then and are listed as
//! ignored (with how to run them) otherwise, never passing silently.

fn main() {
    println!("cargo::rerun-if-env-changed=MCP_INTEROP_PYTHON");
    println!("cargo::rustc-check-cfg=cfg(mcp_interop_python)");
    if std::env::var_os("MCP_INTEROP_PYTHON").is_some_and(|python| !python.is_empty()) {
        println!("cargo::rustc-cfg=mcp_interop_python");
    }
}
