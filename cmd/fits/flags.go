package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/fits-snn/fits/fits/neuron"
	"github.com/fits-snn/fits/internal/jsonraw"
)

// inputError marks an error caused by bad user input: the CLI exits with status 2.
type inputError struct{ msg string }

func (e *inputError) Error() string { return e.msg }

// badInput returns an inputError with a formatted message.
func badInput(format string, args ...any) error {
	return &inputError{msg: fmt.Sprintf(format, args...)}
}

// isErr reports whether err's tree holds an error of type E (errors.AsType).
func isErr[E error](err error) bool {
	_, ok := errors.AsType[E](err)
	return ok
}

// diskFull reports whether err is a full disk or an exhausted quota: never bad input.
func diskFull(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}

// badPath is bad input with the formatted message for err, a path that cannot be written, unless err is
// a full disk (diskFull), which it returns as it is.
func badPath(err error, format string, args ...any) error {
	if diskFull(err) {
		return err
	}
	return badInput(format, args...)
}

// errHelp is returned when --help was requested: usage was printed, exit status 0.
var errHelp = errors.New("help requested")

// newFlagSet returns a flag set for a subcommand that reports errors instead of exiting.
func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("fits "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// parseFlags parses args; a parse failure becomes an inputError and --help becomes errHelp.
// Positional arguments are rejected.
func parseFlags(fs *flag.FlagSet, args []string) error {
	// Silence the flag package's own message; we print one line ourselves.
	out := fs.Output()
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	fs.SetOutput(out)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprintf(out, "usage of %s:\n", fs.Name())
		fs.PrintDefaults()
		return errHelp
	}
	if err != nil {
		return badInput("%v", err)
	}
	if fs.NArg() > 0 {
		return badInput("unexpected argument %q (flags take the form --name=value)", fs.Arg(0))
	}
	return nil
}

// maxListFile is the largest file that --name=@FILE reads (16 MiB: millions of values).
const maxListFile = 16 << 20

// maxInputFile is the largest --input file of fits simulate (256 MiB).
const maxInputFile = 256 << 20

// openInputFile opens a file that a flag names, for reading: it must be a regular file (not a folder, a
// FIFO or a device, which are refused without blocking) of at most limit bytes.
func openInputFile(path string, limit int64) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	switch {
	case err != nil:
	case st.IsDir():
		err = fmt.Errorf("%s is a directory", path)
	case !st.Mode().IsRegular():
		err = fmt.Errorf("%s is not a regular file", path)
	case st.Size() > limit:
		err = fmt.Errorf("%s holds %d bytes, more than the %d MiB such a file may", path, st.Size(), limit>>20)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// maxBenchFile is the largest --bench file of fits analyze (16 MiB: thousands of rows of fits bench --json).
const maxBenchFile = 16 << 20

// readInputFile reads a file that a flag names (openInputFile), at most limit bytes.
func readInputFile(path string, limit int64) ([]byte, error) {
	f, err := openInputFile(path, limit)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, limit))
}

// shortQuote quotes s for a message, cut to 40 characters, with unprintable bytes escaped.
func shortQuote(s string) string {
	if len(s) > 40 {
		cut := 40
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		return strconv.Quote(s[:cut]) + fmt.Sprintf("... (%d bytes)", len(s))
	}
	return strconv.Quote(s)
}

// listValue is the flag.Value of a list flag: comma-separated values, or "@FILE" to read them from a file
// (values separated by commas, spaces or line breaks), for lists longer than a command line allows.
type listValue struct{ s *string }

func (v listValue) String() string {
	if v.s == nil {
		return ""
	}
	return *v.s
}

// maxListValues is the most values a list flag holds (a list, or a @FILE): more is refused before any
// work, however short each value (a 16 MiB file of "1," would be eight million of them).
const maxListValues = 100_000

// checkListLength refuses a list of more than maxListValues values (counted by their commas).
func checkListLength(s string) error {
	if n := strings.Count(s, ",") + 1; n > maxListValues {
		return fmt.Errorf("%d values, more than the %d a list may hold", n, maxListValues)
	}
	return nil
}

func (v listValue) Set(s string) error {
	path, ok := strings.CutPrefix(s, "@")
	if !ok {
		if err := checkListLength(s); err != nil {
			return err
		}
		*v.s = s
		return nil
	}
	b, err := readInputFile(path, maxListFile)
	if err != nil {
		return err
	}
	if bytes.IndexByte(b, 0) >= 0 || !utf8.Valid(b) {
		return fmt.Errorf("%s holds binary data, not a list of values", path)
	}
	*v.s = strings.Join(strings.FieldsFunc(string(b), func(r rune) bool {
		return r == ',' || r == ' ' || r == '\t' || r == '\n' || r == '\r'
	}), ",")
	if *v.s == "" {
		return fmt.Errorf("%s holds no values", path)
	}
	if err := checkListLength(*v.s); err != nil {
		return fmt.Errorf("%s holds %v", path, err)
	}
	return nil
}

// listFlag registers a list flag on fs, like fs.String: its value is comma-separated, or read from a file
// with --name=@FILE. Every flag that takes a list is registered with it.
func listFlag(fs *flag.FlagSet, name, value, usage string) *string {
	s := value
	fs.Var(listValue{&s}, name, usage+" (or @FILE: the values from a file)")
	return &s
}

// parseFloat parses one finite float64 named name.
func parseFloat(name, s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, badInput("--%s: %s is not a finite number", name, shortQuote(s))
	}
	return v, nil
}

// parseInt parses one int64 named name, written as an integer or as a float of integral value ("1e3").
func parseInt(name, s string) (int64, error) {
	x, err := parseFloat(name, s)
	if err != nil || x != float64(int64(x)) {
		return 0, badInput("--%s: %q is not an integer", name, s)
	}
	return int64(x), nil
}

// parseFloatList parses a comma-separated list of finite float64 values; an empty string gives nil.
func parseFloatList(name, s string) ([]float64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	parts := strings.Split(s, ",")
	out := make([]float64, len(parts))
	for i, p := range parts {
		v, err := parseFloat(name, p)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// tsFlags are the TS cascade's flags of simulate and response: --beta, --lambda and --ts-mix (the nesting
// of the TS module's λ-mix).
type tsFlags struct{ beta, lambda, mix *string }

// addTSFlags defines --beta, --lambda and --ts-mix on fs.
func addTSFlags(fs *flag.FlagSet) tsFlags {
	return tsFlags{
		beta:   listFlag(fs, "beta", "", "comma-separated all-pass coefficients β_1..β_M, |β| < 1 (empty: M = 0)"),
		lambda: listFlag(fs, "lambda", "", "comma-separated mixing weights λ_1..λ_M in [0, 1] (same length as --beta)"),
		mix:    fs.String("ts-mix", string(neuron.TSMixOfficial), "nesting of the TS module's lambda-mix: official (the released code: innermost first, a spike when V > Vth) or paper (Eq. 10, outermost first, V >= Vth); for M <= 1 the same neuron"),
	}
}

// parse returns β_1..β_M, λ_1..λ_M and the nesting; a value that is not a finite number or a nesting is bad
// input (the lengths are the caller's to check).
func (t tsFlags) parse() (beta, lambda []float64, mix neuron.TSMix, err error) {
	if beta, err = parseFloatList("beta", *t.beta); err != nil {
		return
	}
	if lambda, err = parseFloatList("lambda", *t.lambda); err != nil {
		return
	}
	if mix, err = neuron.ParseTSMix(*t.mix); err != nil {
		err = badInput("--ts-mix: %v", err)
	}
	return
}

// jsonFloat is a float64 that encodes NaN and ±Inf as JSON null (encoding/json rejects them).
type jsonFloat float64

// MarshalJSON implements json.Marshaler.
func (f jsonFloat) MarshalJSON() ([]byte, error) {
	v := float64(f)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return []byte("null"), nil
	}
	return json.Marshal(v)
}

// jsonFloats converts a slice to jsonFloat values.
func jsonFloats(v []float64) []jsonFloat {
	out := make([]jsonFloat, len(v))
	for i, x := range v {
		out[i] = jsonFloat(x)
	}
	return out
}

// optFloat returns &v when ok and v is finite, else nil (encoded as JSON null).
func optFloat(v float64, ok bool) *float64 {
	if !ok || math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// fmtOpt formats an optional value for a text table with format (e.g. "%.6f"), "-" when absent.
func fmtOpt(v *float64, format string) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf(format, *v)
}

// joinFloats formats each value of v times scale with format, comma-separated: the firing rates of a
// text table, e.g. joinFloats(rates, 100, "%.2f%%") gives "12.34%, 5.00%".
func joinFloats(v []float64, scale float64, format string) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprintf(format, scale*x)
	}
	return strings.Join(s, ", ")
}

// writeJSON prints v as exactly one JSON object followed by a newline, with the exact bytes of every
// string that is not valid UTF-8 beside it (package jsonraw: the member NAME_base64). Strings that JSON
// cannot tell apart, or a map key that is not UTF-8, are bad input.
func writeJSON(w io.Writer, v any) error {
	b, err := jsonraw.Marshal(v)
	if isErr[*jsonraw.IndistinctError](err) || isErr[*jsonraw.KeyError](err) {
		return badInput("--json: %v", err)
	}
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}
