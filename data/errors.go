package data

import "errors"

// FileError reports a dataset file or folder that cannot be used as it is: missing, unreadable, or not in
// the format its reader expects (truncated, a bad header or magic number, a wrong sample rate, labels out
// of range, an empty split, ...). The fix lies with the files, not with the program: the CLI reports it as
// bad input (exit status 2). Writing a converted cache that fails (a full disk) is not a FileError.
//
// The message is Err's, which names the file.
type FileError struct{ Err error }

func (e *FileError) Error() string { return e.Err.Error() }

func (e *FileError) Unwrap() error { return e.Err }

// BadFile marks err as a FileError; nil stays nil and an error that already holds a FileError is
// returned as it is.
func BadFile(err error) error {
	if err == nil {
		return nil
	}
	var fe *FileError
	if errors.As(err, &fe) {
		return err
	}
	return &FileError{Err: err}
}

// IsBadFile reports whether err holds a FileError.
func IsBadFile(err error) bool {
	var fe *FileError
	return errors.As(err, &fe)
}
