package responses

import (
	"encoding/json"

	"github.com/modelgate/modelgate/internal/apierr"
)

// Output items of the model's calls of the client's tools, as the
// Responses API returns them (see toolmap.go for the chat functions they
// come from).
type (
	callItem struct {
		Type      string `json:"type"` // function_call
		ID        string `json:"id"`
		CallID    string `json:"call_id"`
		Namespace string `json:"namespace,omitempty"`
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
		Status    string `json:"status"`
	}
	customCallItem struct {
		Type      string `json:"type"` // custom_tool_call
		ID        string `json:"id"`
		CallID    string `json:"call_id"`
		Namespace string `json:"namespace,omitempty"`
		Name      string `json:"name"`
		Input     string `json:"input"`
		Status    string `json:"status"`
	}
	shellCallItem struct {
		Type   string      `json:"type"` // local_shell_call
		ID     string      `json:"id"`
		CallID string      `json:"call_id"`
		Action shellAction `json:"action"`
		Status string      `json:"status"`
	}
	shellAction struct {
		Type             string            `json:"type"` // exec
		Command          []string          `json:"command"`
		TimeoutMs        *int64            `json:"timeout_ms"`
		WorkingDirectory *string           `json:"working_directory"`
		Env              map[string]string `json:"env"`
		User             *string           `json:"user"`
	}
)

// shellArgs is the local_shell function's arguments.
type shellArgs struct {
	Command   []string `json:"command"`
	Workdir   *string  `json:"workdir,omitempty"`
	TimeoutMs *int64   `json:"timeout_ms,omitempty"`
}

// idPrefix is the prefix of the output item id of a call of kind.
func idPrefix(kind string) string {
	switch kind {
	case kindCustom:
		return "ctc_"
	case kindLocalShell:
		return "lsh_"
	}
	return "fc_"
}

// callOutput is the output item for the model's call of the chat function
// name with args: a function_call, custom_tool_call or local_shell_call
// item as the client's tool is.
func (n toolNames) callOutput(id, callID, name, args, status string) any {
	o := n.of(name)
	switch o.kind {
	case kindCustom:
		return customCallItem{Type: "custom_tool_call", ID: id, CallID: callID, Namespace: o.namespace, Name: o.name,
			Input: customInput(args), Status: status}
	case kindLocalShell:
		return shellCallItem{Type: "local_shell_call", ID: id, CallID: callID, Action: execAction(args), Status: status}
	}
	return callItem{Type: "function_call", ID: id, CallID: callID, Namespace: o.namespace, Name: o.name, Arguments: args, Status: status}
}

// customInput is a custom tool's input from its function's arguments
// ({"input": "..."}); arguments of another shape are the input as they are.
func customInput(args string) string {
	var a struct {
		Input *string `json:"input"`
	}
	if json.Unmarshal([]byte(args), &a) != nil || a.Input == nil {
		return args
	}
	return *a.Input
}

// execAction is the exec action of the local_shell function's arguments.
func execAction(args string) shellAction {
	var a shellArgs
	_ = json.Unmarshal([]byte(args), &a) // a model's bad arguments leave the command empty
	if a.Command == nil {
		a.Command = []string{}
	}
	return shellAction{Type: "exec", Command: a.Command, TimeoutMs: a.TimeoutMs, WorkingDirectory: a.Workdir, Env: map[string]string{}}
}

// shellArguments is the local_shell function's arguments for an earlier
// local_shell_call's action.
func shellArguments(param string, raw json.RawMessage) (string, *apierr.Error) {
	if !present(raw) {
		return "", missing(param)
	}
	var a shellAction
	if err := json.Unmarshal(raw, &a); err != nil {
		e := typeError(err)
		e.Param = param + "." + e.Param
		return "", e
	}
	if a.Type != "exec" {
		return "", apierr.Invalid(param+".type", "Invalid value for '%s.type': '%s'. Supported values are: 'exec'.", param, a.Type)
	}
	b, _ := json.Marshal(shellArgs{Command: a.Command, Workdir: a.WorkingDirectory, TimeoutMs: a.TimeoutMs})
	return string(b), nil
}
