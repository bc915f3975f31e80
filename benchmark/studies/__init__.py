"""Studies of the measures themselves, each a script that prints its figures: the validity of the
reference-free excess (`necessity/`: the study on the suites and its figures, and on the labelled over-edit
corpus), and the over-edit studies (`overedits/`): the core's units on the labelled corpus, real model edits
against human labels, and recorded runs per model. They use the run wing (the engine's pieces, the server over
LSP), never the other way round."""
