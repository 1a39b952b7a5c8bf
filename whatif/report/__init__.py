"""What the simulator reports: text, Markdown, the fleet view, number formats and the chart."""
