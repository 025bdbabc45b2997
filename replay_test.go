package day1

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestTaskReplayAsOfIsChecked(t *testing.T) {
	t.Parallel()
	c, _ := open(t, nil)
	_, err := c.TaskReplay(context.Background(), "any", ReplayOptions{AsOf: At{Snapshot: "s", Time: time.Now()}})
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Field != "ReplayOptions.AsOf" {
		t.Errorf("TaskReplay with a snapshot and a time = %v; want a ValidationError on ReplayOptions.AsOf", err)
	}
}
