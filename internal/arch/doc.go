// Package arch holds no code: its tests check the import rules and the store rule of
// docs/architecture.md on the whole module, so that a change that breaks them fails make test.
package arch
