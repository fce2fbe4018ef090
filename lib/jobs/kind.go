package jobs

import (
	"context"
	"encoding/json"
	"fmt"
)

// Kind is one kind of work a plan may name (its Plan.Command: verify, recheck, eval,
// run, study). Its value is the plan's arguments (Plan.Args, as JSON). On a worker, Open
// opens what the kind needs on the node (with env, what the caller gives every kind:
// envgap's engine, store and flags) and returns what does one item exactly as a local
// run does, and what closes what it opened.
type Kind[E any] interface {
	// Command is the kind's name in a plan.
	Command() string
	// ItemsAtOnce is how many items a worker does at once.
	ItemsAtOnce() int
	Open(ctx context.Context, env E, items []string, logf func(string, ...any)) (Handler, func(), error)
}

// Kinds is the typed registry of the kinds of work a plan may name: each command's empty
// arguments. Adding a kind is one type implementing Kind and one entry.
type Kinds[E any] map[string]func() Kind[E]

// Decode returns the kind p names, its arguments read from p.Args.
func (k Kinds[E]) Decode(p Plan) (Kind[E], error) {
	newKind, ok := k[p.Command]
	if !ok {
		return nil, fmt.Errorf("this envgap does not know the command %q of the plan", p.Command)
	}
	kind := newKind()
	if err := json.Unmarshal(p.Args, kind); err != nil {
		return nil, fmt.Errorf("the plan's arguments: %w", err)
	}
	return kind, nil
}

// An Item is a worker's result of one item, as a kind's handler writes it: Head points at
// its item name and its error; Lacking says what a result without an error lacks ("":
// nothing).
type Item[T any] interface {
	*T
	Head() (item, msg *string)
	Lacking() string
}

// ItemOf reads a worker's result of one item into a T: a result that cannot be read or is
// for another item, or that lacks what it should hold (without an error saying why), is an
// error of the item. A nil d is an item no worker finished (why: NotDone).
func ItemOf[T any, P Item[T]](d *Done) T {
	var it T
	item, msg := P(&it).Head()
	if why := d.Decode(&it, item); why != "" {
		var none T
		it = none
		*item, *msg = d.Item, why
	} else if lack := P(&it).Lacking(); lack != "" && *msg == "" {
		*msg = lack
	}
	return it
}

// Decode reads a worker's result of d's item into v, whose item name is *item; it
// returns why there is none (the item could not be done, or the result is not for it).
func (d *Done) Decode(v any, item *string) string {
	if d.Result != nil && json.Unmarshal(d.Result, v) == nil && *item == d.Item {
		return ""
	}
	if d.Error != "" {
		return d.Error
	}
	return "the worker's result could not be read"
}

// NotDone is the result of item i that no worker finished, saying why.
func (o *Outcome) NotDone(i int, item string) *Done {
	why := "not run: interrupted"
	if o.Missing != "" {
		why = "not run: " + o.Missing
	}
	return &Done{Index: i, Item: item, Error: why}
}
