// Package tools owns the registry of step tools: typed parameters, JSON
// schemas for the LLM, execution over a transport.Transport, and the
// observation string a step's result becomes.
package tools
