"""dpexplore.widgets"""
