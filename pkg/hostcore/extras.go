package hostcore

// extraTools are the high-risk tools, each in its own file.
func (h *Host) extraTools() []*ToolDef {
	return []*ToolDef{h.writeTool(), h.editTool(), h.bashTool()}
}
