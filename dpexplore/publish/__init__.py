"""dpexplore.publish"""
