// Package maketest holds no code: its tests run the Makefile's targets the way a person does,
// so that what they print stays true.
package maketest
