// Package homeenv sets HOME, where the environment lacks it, to the user's home folder from the system's
// user database, before any other package of the program reads it: the XLA plugin search reads it while
// the program initializes (and printed two library log lines without it), and the default data and cache
// folders are under it. The fits command imports it for that effect alone.
//
// Go initializes, among the packages whose imports are initialized, the one first by import path: this
// package imports only the standard library, and its path sorts before those of the XLA bindings, so it
// runs before them.
package homeenv

import (
	"os"
	"os/user"
)

// Set reports whether HOME was missing and is now set from the user database.
var Set bool

func init() {
	if os.Getenv("HOME") != "" {
		return
	}
	u, err := user.Current()
	if err != nil || u.HomeDir == "" {
		return
	}
	if st, err := os.Stat(u.HomeDir); err != nil || !st.IsDir() {
		return
	}
	Set = os.Setenv("HOME", u.HomeDir) == nil
}
