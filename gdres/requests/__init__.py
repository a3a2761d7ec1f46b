"""What a request and its reply are: the models (models.py, replies.py), the confinement of paths
(paths.py), and one request's way from text to engine message and back (request.py). Pure: no
process, no engine."""
