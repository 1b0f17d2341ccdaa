"""Training the models the project builds itself (`rag train-verifier`). Nothing at run time imports this package;
the CLI dispatches to it."""
