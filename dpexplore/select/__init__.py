"""dpexplore.select"""
