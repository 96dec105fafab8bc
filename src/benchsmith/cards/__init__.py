"""Dataset cards (YAML front matter + Markdown), Croissant metadata and lm-eval task configs."""
