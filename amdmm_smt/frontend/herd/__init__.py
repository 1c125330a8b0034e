"""herd / Dartagnan `.litmus` tests in their C11 / OpenCL dialect -> the YAML contract
(docs/herd-import.md): lexer.py (tokens) -> parser.py (the AST of syntax.py) -> lower.py (one
thread to LLVM IR lines) -> convert.py (the YAML text, line map, entry points)."""
