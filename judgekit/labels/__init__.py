"""Label tables: (item, rater, label) rows, items x raters tables, majorities and ties, human
votes."""
