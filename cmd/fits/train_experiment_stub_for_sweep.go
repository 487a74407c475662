package main

// A temporary stand-in for `fits train --experiment=ID --mode=M`, used by `fits sweep` until the real
// flags replace this file: the experiment's configuration becomes the defaults of every other flag.

import (
	"flag"
	"strconv"
	"strings"

	"github.com/fits-snn/fits/fits/experiment"
	"github.com/fits-snn/fits/fits/train"
)

// experimentFlags registers --experiment and --mode (read earlier by trainDefaults).
func experimentFlags(fs *flag.FlagSet) {
	fs.String("experiment", "", "experiment ID: its configuration gives the defaults of the other flags")
	fs.String("mode", string(experiment.Full), "schedule of --experiment: quick or full")
}

// trainDefaults returns the configuration that the flags of `fits train` start from.
func trainDefaults(args []string) (train.Config, error) {
	var id, mode, seed string
	mode = string(experiment.Full)
	for _, a := range args {
		if a == "--" {
			break
		}
		name, value, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch name {
		case "experiment":
			id = value
		case "mode":
			mode = value
		case "seed":
			seed = value
		}
	}
	if id == "" {
		return train.DefaultConfig(), nil
	}
	e, err := experiment.Lookup(id)
	if err != nil {
		return train.Config{}, badInput("--experiment: %v", err)
	}
	m, err := experiment.ParseMode(mode)
	if err != nil {
		return train.Config{}, badInput("--mode: %v", err)
	}
	s := int64(1)
	if len(e.Seeds) > 0 {
		s = e.Seeds[0]
	}
	if seed != "" {
		if s, err = strconv.ParseInt(seed, 10, 64); err != nil {
			return train.Config{}, badInput("--seed: %q is not an integer", seed)
		}
	}
	c, err := e.Config(m, s)
	if err != nil {
		return train.Config{}, badInput("--experiment=%s: %v", id, err)
	}
	return c, nil
}
