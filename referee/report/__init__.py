"""What is published: policy, Markdown, CSV, JSON, the page and the replay viewer. Imports stats and below."""
