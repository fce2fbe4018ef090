package lite

import "github.com/envgap/envgap/lib/studylayout"

// The study layout is shared with envgap study (which writes and reports on it): its
// definitions live in lib/studylayout. These names keep the import's vocabulary.
const (
	MetaFile     = studylayout.MetaFile
	WrittenDir   = studylayout.WrittenDir
	RepairedDir  = studylayout.RepairedDir
	PromptFile   = studylayout.PromptFile
	ProblemsFile = studylayout.ProblemsFile
	// SetupScriptPath is where a Lite fix puts the script that installs system packages.
	SetupScriptPath = studylayout.SetupScriptPath
	MaxFileBytes    = studylayout.MaxFileBytes
	MaxProjectBytes = studylayout.MaxProjectBytes
	MaxProjectFiles = studylayout.MaxProjectFiles
)

type (
	// Meta is a project's meta.json (studylayout.Meta).
	Meta = studylayout.Meta
	// Problem is one programming task of the study (studylayout.Problem).
	Problem    = studylayout.Problem
	projectRef = studylayout.Project
)

var (
	// ParseMeta decodes and checks a meta.json (studylayout.ParseMeta).
	ParseMeta = studylayout.ParseMeta
	// ReadProblems reads a problem list (studylayout.ReadProblems).
	ReadProblems = studylayout.ReadProblems
	// CheckPackageName checks a Debian package name (studylayout.CheckPackageName).
	CheckPackageName = studylayout.CheckPackageName
	// SetupScript writes the setup.sh that installs system packages (studylayout.SetupScript).
	SetupScript  = studylayout.SetupScript
	listProjects = studylayout.List
	problemIndex = studylayout.IndexProblems
)
