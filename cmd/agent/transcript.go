package main

import "github.com/autoshell/agent/llm"

// transcriptOptions opens path (when not empty) for the transcript of every
// message exchanged with the model and returns the client options that
// write it, and a func that closes the file.
func transcriptOptions(path string) ([]llm.Option, func(), error) {
	if path == "" {
		return nil, func() {}, nil
	}
	return nil, nil, usagef("--transcript is not built yet")
}
