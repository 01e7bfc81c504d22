// Package suggest finds the known word nearest to a mistyped one, for the
// "did you mean" of the CLI's commands and flags and of misspelt GOCUDA_
// variables, so that both answer a typo the same way.
package suggest
