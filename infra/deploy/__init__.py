"""Deployment: the template (read, validated), the functions' bundle, the OpenAPI document, static checks."""
