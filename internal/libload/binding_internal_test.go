package libload

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestStagesMatchTheHeader(t *testing.T) {
	// The packages' C calls return cudalib.h's numbers, read as Stage.
	assert.Equal(t, []Stage{StageOK, StageContext, StageStream, StageCall, StageRestore, StageOwn}, cStages())
}
