// Command fits is the command-line interface of the FiTS toolkit: closed-form theory, responses,
// simulation, training, evaluation, benchmarks, figures and datasets.
//
// Every subcommand takes flags as --name=value, lists as comma-separated values, and --json prints
// exactly one JSON object on stdout. Bad input prints one line on stderr and exits with status 2;
// other failures exit with status 1. No panic trace is ever printed.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	_ "github.com/fits-snn/fits/data/all" // registers every dataset with package data
)

// command is one subcommand of the CLI.
type command struct {
	name    string
	summary string
	// run executes the subcommand with its own arguments (without the subcommand name).
	run func(args []string, stdout, stderr io.Writer) error
}

var commands = map[string]*command{}

// register adds a subcommand; called from init functions of the files that implement them.
func register(c *command) {
	if _, dup := commands[c.name]; dup {
		panic("duplicate command " + c.name)
	}
	commands[c.name] = c
}

func main() {
	os.Exit(runMain(os.Args[1:], os.Stdout, os.Stderr))
}

// runMain runs the CLI and returns the process exit status. Tests call it directly.
func runMain(args []string, stdout, stderr io.Writer) (status int) {
	defer func() {
		if r := recover(); r != nil {
			msg := strings.SplitN(fmt.Sprint(r), "\n", 2)[0]
			fmt.Fprintf(stderr, "fits: internal error: %s\n", msg)
			status = 1
		}
	}()
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		printUsage(stdout)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "fits: unknown command %q (valid: %s)\n", args[0], strings.Join(commandNames(), ", "))
		return 2
	}
	err := cmd.run(args[1:], stdout, stderr)
	if err == nil {
		return 0
	}
	if errors.Is(err, errHelp) {
		return 0
	}
	fmt.Fprintf(stderr, "fits %s: %s\n", cmd.name, oneLine(err.Error()))
	var bad *inputError
	if errors.As(err, &bad) {
		return 2
	}
	return 1
}

func commandNames() []string {
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "usage: fits <command> [--flag=value ...]")
	fmt.Fprintln(w, "\ncommands:")
	for _, n := range commandNames() {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nRun 'fits <command> --help' for the flags of one command.")
}

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ")), " ")
}
