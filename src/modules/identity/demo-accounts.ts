// The demo organization's accounts and their one password, published in the README (so production
// refuses it: see lockPublishedPasswords).
export const DEMO_PASSWORD = 'atrium-demo-2026';

export const DEMO_USERS = [
  {
    email: 'admin@riverside.example',
    name: 'Avery Admin',
    role: 'admin',
    workspaces: ['Riverside Clinic', 'Harbor Therapy'],
  },
  {
    email: 'dr.lee@riverside.example',
    name: 'Dr. Morgan Lee',
    role: 'member',
    provider: true,
    workspaces: ['Riverside Clinic'],
  },
  { email: 'sam@riverside.example', name: 'Sam Rivera', role: 'member', workspaces: ['Riverside Clinic'] },
  { email: 'jordan@harbor.example', name: 'Jordan Park', role: 'admin', workspaces: ['Harbor Therapy'] },
  { email: 'casey@harbor.example', name: 'Casey Kim', role: 'member', provider: true, workspaces: ['Harbor Therapy'] },
] as const;
