"""The front ends: the `rag` command line (cli.py) with its terminal presenters (terminal.py), and the HTTP service
(http/). They call only the engine, the library and the evaluation harness."""
