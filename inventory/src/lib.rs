//! mcpscope: the read-only MCP inventory library.
