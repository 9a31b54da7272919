// __NAME__: an adaptor for the structured-output harness, in Go (standard
// library only). Written by `harness init adaptor --lang go`.
//
// Build it, then run it against the harness's catalogue from the folder you
// ran init in:
//
//	__BUILD__
//	__RUN__
//
// It speaks the harness's JSON-lines protocol on stdin/stdout (one request a
// line, one reply a line; log to stderr) and drives the agent CLI each request
// names. Under the harness, provider.Executables names a fake CLI to run in
// place of the real one and provider.Env tells it what to print; in
// production, run the real CLI (the command clis names, on PATH): see launch
// and clis, where the CLI call is made.
//
// What it does today: runs without a schema, decoding the CLI's assistant text
// as one JSON value (numbers kept exact), and reports execution failures. A
// request with a schema is answered "skipped"; add schema intake, negotiation
// and validation in run where it says so (docs/adaptors.md, docs/outcome.md).
// Cases for the schema_type feature are skipped by the harness, because
// implementation does not announce it.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"
)

// cli is how one CLI is run: its command on PATH in production, its arguments
// after the executable and before the prompt, and which of readers reads its output.
type cli struct {
	command string
	args    []string
	reader  string
}

// clis holds each CLI by the request's driver name. Written by `harness init`
// from the harness's registry of agent CLIs.
var clis = map[string]cli{} // __CLIS__

var implementation = map[string]any{
	"name":     "__NAME__",
	"version":  "0.1.0",
	"language": "go",
	"drivers":  drivers(),
	"features": []string{},
}

// drivers are the names of clis, in order.
func drivers() []string {
	names := make([]string, 0, len(clis))
	for name := range clis {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

type message struct {
	Cmd      string   `json:"cmd"`
	Seq      int      `json:"seq"`
	Scenario string   `json:"scenario"`
	Request  request  `json:"request"`
	Provider provider `json:"provider"`
}

type request struct {
	Driver  string  `json:"driver"`
	Prompt  string  `json:"prompt"`
	Schema  *string `json:"schema"`
	Timeout float64 `json:"timeout"`
}

type provider struct {
	Executables map[string]string `json:"executables"`
	Env         map[string]string `json:"env"`
	Work        string            `json:"work"`
}

// outcome is the canonical outcome (docs/outcome.md).
type outcome struct {
	Status      string  `json:"status"`
	Error       *string `json:"error"`
	Cause       *string `json:"cause"`
	Message     *string `json:"message"`
	Value       any     `json:"value"`
	HasValue    bool    `json:"has_value"`
	Text        *string `json:"text"`
	Mechanism   *string `json:"mechanism"`
	Diagnostics []any   `json:"diagnostics"`
	Raw         any     `json:"raw"`
	Stdout      string  `json:"stdout"`
}

// failed is a provider run that failed: cause is the outcome's execution_error cause.
type failed struct {
	cause, message string
	text           *string
}

func (f *failed) Error() string { return f.message }

func errorOutcome(kind, cause, message string, text *string, raw any, stdout string) outcome {
	o := outcome{Status: "error", Error: &kind, Message: &message, Text: text, Raw: raw, Stdout: stdout}
	if cause != "" {
		o.Cause = &cause
	}
	o.Diagnostics = []any{}
	return o
}

// loads reads exactly one JSON value, keeping numbers exact (json.Number).
func loads(text, where string) (any, error) {
	decoder := json.NewDecoder(strings.NewReader(text))
	decoder.UseNumber()
	var value any
	err := decoder.Decode(&value)
	if err == nil {
		if _, next := decoder.Token(); next != io.EOF {
			err = errors.New("data after the JSON value")
		}
	}
	if err != nil {
		return nil, &failed{cause: "malformed_protocol", message: where + " is not JSON: " + err.Error()}
	}
	return value, nil
}

type finished struct {
	stdout   []byte
	state    *os.ProcessState
	timedOut bool
}

// launch runs the CLI in its own process group, so the deadline kills what it started too.
func launch(argv []string, p provider, timeout float64) (finished, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = os.Environ()
	for key, value := range p.Env {
		cmd.Env = append(cmd.Env, key+"="+value)
	}
	cmd.Dir = p.Work
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		return finished{}, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	timedOut := false
	select {
	case <-done:
	case <-time.After(time.Duration(timeout * float64(time.Second))):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		timedOut = true
	}
	return finished{stdout.Bytes(), cmd.ProcessState, timedOut}, nil
}

// readCodex reads `codex exec --json`: the completed agent messages, and the turn's last event.
func readCodex(stdout string) (*string, any, error) {
	var messages []string
	var terminal any
	var failure *string
	for number, line := range strings.Split(stdout, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "{") {
			continue // blank lines, and notes Codex prints between its events
		}
		value, err := loads(line, fmt.Sprintf("line %d", number+1))
		if err != nil {
			return nil, nil, err
		}
		event := value.(map[string]any)
		kind := event["type"]
		item, _ := event["item"].(map[string]any)
		if kind == "item.completed" && item["type"] == "agent_message" {
			text, _ := item["text"].(string)
			messages = append(messages, text)
		} else if kind == "turn.completed" || kind == "turn.failed" {
			terminal = event
		}
		if (kind == "turn.failed" || kind == "error") && failure == nil {
			detail := event["error"] // an error poisons the turn, whatever follows
			if detail == nil {
				detail = event["message"]
			}
			shown, _ := json.Marshal(detail)
			failure = new(string)
			*failure = string(shown)
		}
	}
	var kept []string
	for _, m := range messages {
		if strings.TrimSpace(m) != "" {
			kept = append(kept, strings.TrimSpace(m))
		}
	}
	var text *string
	if len(kept) > 0 {
		joined := strings.Join(kept, "\n\n")
		text = &joined
	}
	if failure != nil {
		return text, nil, &failed{"turn_failed", *failure, text}
	}
	return text, terminal, nil
}

// readResult reads Claude Code, Cursor and CodeBuddy: one result record
// (CodeBuddy: an array of records).
func readResult(stdout string) (*string, any, error) {
	if strings.TrimSpace(stdout) == "" {
		return nil, nil, nil
	}
	document, err := loads(stdout, "stdout")
	if err != nil {
		return nil, nil, err
	}
	if records, ok := document.([]any); ok && len(records) > 0 {
		document = records[len(records)-1]
	}
	record, _ := document.(map[string]any)
	if record["type"] != "result" {
		return nil, nil, nil
	}
	var text *string
	if result, ok := record["result"].(string); ok {
		text = &result
	}
	if record["subtype"] != "success" {
		return text, nil, &failed{"turn_failed", fmt.Sprintf("result subtype %v", record["subtype"]), text}
	}
	if record["is_error"] == true {
		message := "the CLI reported an API error"
		if text != nil && *text != "" {
			message = *text
		}
		return text, nil, &failed{"api_error", message, text}
	}
	return text, record, nil
}

// readers read a CLI's batch output: Codex's JSON lines, or a Claude-style result.
var readers = map[string]func(string) (*string, any, error){
	"codex":  readCodex,
	"result": readResult,
}

// run answers one run request: an outcome, or a skip for what this adaptor does not do yet.
func run(req request, p provider) (map[string]any, error) {
	if req.Schema != nil {
		// Add structured output here: check the schema, pass it to the CLI (codex
		// --output-schema FILE, claude --json-schema TEXT, or in the prompt), then
		// validate the candidate and apply the request's on_invalid.
		return map[string]any{"skipped": true, "reason": "__NAME__ does not implement schemas yet"}, nil
	}
	// In production: the CLI on PATH, clis[req.Driver].command (cursor-agent for cursor).
	executable := p.Executables[req.Driver]
	argv := append(append([]string{executable}, clis[req.Driver].args...), req.Prompt)
	done, err := launch(argv, p, req.Timeout)
	if err != nil {
		return nil, err
	}
	stdout := strings.ToValidUTF8(string(done.stdout), "\uFFFD")
	text, raw, err := func() (*string, any, error) {
		status := done.state.Sys().(syscall.WaitStatus)
		switch {
		case done.timedOut:
			return nil, nil, &failed{cause: "timeout", message: fmt.Sprintf("no answer within %gs", req.Timeout)}
		case status.Signaled():
			return nil, nil, &failed{cause: "signal", message: "the CLI was killed by " + status.Signal().String()}
		case !utf8.Valid(done.stdout):
			return nil, nil, &failed{cause: "malformed_protocol", message: "stdout is not UTF-8"}
		}
		text, raw, err := readers[clis[req.Driver].reader](stdout)
		switch {
		case err != nil:
			return text, raw, err
		case status.ExitStatus() != 0:
			return text, raw, &failed{"nonzero_exit", fmt.Sprintf("the CLI exited with %d", status.ExitStatus()), text}
		case raw == nil:
			return text, raw, &failed{"missing_terminal", "the CLI ended without its final event", text}
		}
		return text, raw, nil
	}()
	var failure *failed
	if errors.As(err, &failure) {
		return map[string]any{"outcome": errorOutcome("execution_error", failure.cause, failure.message, failure.text, nil, stdout)}, nil
	}
	// Without a schema, Decode parses the trimmed assistant text as one JSON value.
	trimmed := ""
	if text != nil {
		trimmed = strings.TrimSpace(*text)
	}
	value, err := loads(trimmed, "the text")
	if err != nil {
		message := "cannot decode the text as JSON: " + err.Error()
		return map[string]any{"outcome": errorOutcome("decode_error", "", message, text, raw, stdout)}, nil
	}
	ok := outcome{Status: "ok", Value: value, HasValue: true, Text: text, Diagnostics: []any{}, Raw: raw, Stdout: stdout}
	return map[string]any{"outcome": ok}, nil
}

// answer runs one request; a panic errors this case only, never the ones after it.
func answer(m message) (reply map[string]any) {
	defer func() {
		if recovered := recover(); recovered != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", m.Scenario, recovered)
			reply = map[string]any{"errored": true, "message": fmt.Sprint(recovered)}
		}
	}()
	reply, err := run(m.Request, m.Provider)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", m.Scenario, err)
		return map[string]any{"errored": true, "message": err.Error()}
	}
	return reply
}

func main() {
	in := bufio.NewReader(os.Stdin)
	out := json.NewEncoder(os.Stdout)
	out.SetEscapeHTML(false)
	for {
		line, readErr := in.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			var m message
			if err := json.Unmarshal(line, &m); err != nil {
				fmt.Fprintf(os.Stderr, "ignoring a line that is not a request: %v\n", err)
				continue
			}
			var reply map[string]any
			switch m.Cmd {
			case "stop":
				return
			case "start":
				reply = map[string]any{"ready": true, "version": 1, "implementation": implementation}
			case "run":
				reply = answer(m)
			default:
				reply = map[string]any{"errored": true, "message": "unknown command " + m.Cmd}
			}
			reply["seq"] = m.Seq
			if err := out.Encode(reply); err != nil {
				return // the harness went away
			}
		}
		if readErr != nil {
			return
		}
	}
}
